import { useEffect, useRef, useState } from 'preact/hooks';
import { ConnectError, type PaymentMethod } from '../api.js';
import { formatPrice, useAction, useStep } from '../context.js';
import { confirmPix, mountCard } from '../stripe.js';

const POLL_MS = 1_500;

/** Spec 3.2 `payment`: Pro by card or Pix (Pix in BRL only), then the confirmation is polled. */
export function PaymentStep() {
  const ctx = useStep();
  const { api, t, boot, refresh, locale, fail } = ctx;
  const { busy, error, setError, run } = useAction();
  const methods = boot.plan.methods;
  const [method, setMethod] = useState<PaymentMethod>(methods[0] ?? 'card');
  const [secret, setSecret] = useState<string | null>(null);
  const [waiting, setWaiting] = useState(false);
  const price = formatPrice(locale, boot.plan.price.amount, boot.plan.price.currency);

  useEffect(() => {
    if (!waiting) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const poll = async () => {
      try {
        const payment = await api.payment();
        if (stopped) return;
        if (payment.status === 'paid' || payment.step !== 'payment') return void (await refresh());
        if (payment.status === 'failed' || payment.status === 'canceled') {
          setWaiting(false);
          setSecret(null);
          return setError(t('paymentFailed'));
        }
      } catch (caught) {
        if (caught instanceof ConnectError && caught.status !== 0) return fail(caught);
      }
      timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [waiting]);

  const checkout = () => run(async () => setSecret((await api.checkout(method)).client_secret));

  return (
    <div class="stack">
      <h2>{t('paymentTitle')}</h2>
      {boot.plan.payment_notice === 'lapsed' && <p class="notice" role="status">{t('lapsed')}</p>}
      <p class="price">{t('perMonth', { price })}</p>
      <fieldset disabled={busy || waiting}>
        <legend>{t('methodLabel')}</legend>
        {methods.map((m) => (
          <label class="choice" key={m}>
            <input type="radio" name="method" value={m} checked={method === m} onChange={() => { setMethod(m); setSecret(null); }} />
            {t(m)}
          </label>
        ))}
      </fieldset>
      {error && <p class="error" role="alert">{error}</p>}
      {waiting && <p role="status">{t('waitingPayment')}</p>}
      {secret === null && <button class="primary" type="button" disabled={busy || waiting} onClick={() => void checkout()}>{t('continue')}</button>}
      {secret !== null && !waiting && boot.payment.provider === 'sandbox' && (
        <div class="stack">
          <p class="notice">{t('sandboxNotice')}</p>
          <button class="primary" type="button" aria-disabled={busy} onClick={() => void run(async () => { await api.confirmSandbox(secret, 'paid'); setWaiting(true); })}>
            {t('pay', { price })}
          </button>
          <button type="button" aria-disabled={busy} onClick={() => void run(async () => { await api.confirmSandbox(secret, 'failed'); setWaiting(true); })}>
            {t('decline')}
          </button>
        </div>
      )}
      {secret !== null && !waiting && boot.payment.provider === 'stripe' && (
        <StripeForm method={method} secret={secret} price={price} onSubmitted={() => setWaiting(true)} onError={setError} />
      )}
    </div>
  );
}

function StripeForm(props: { method: PaymentMethod; secret: string; price: string; onSubmitted: () => void; onError: (message: string) => void }) {
  const { t, boot, locale, paymentSlot } = useStep();
  const card = useRef<Awaited<ReturnType<typeof mountCard>> | undefined>(undefined);
  const key = boot.payment.publishable_key ?? '';

  useEffect(() => {
    if (props.method !== 'card') return;
    let mounted = true;
    void mountCard(key, props.secret, paymentSlot(), locale).then(
      (mountedCard) => (mounted ? (card.current = mountedCard) : mountedCard.destroy()),
      () => props.onError(t('error_payment_unavailable')),
    );
    return () => {
      mounted = false;
      card.current?.destroy();
    };
  }, [props.secret, props.method]);

  const submit = async () => {
    const failure = props.method === 'card' ? await card.current?.confirm() : await confirmPix(key, props.secret).catch(() => t('error_payment_unavailable'));
    if (failure) props.onError(failure);
    else props.onSubmitted();
  };
  return (
    <div class="stack">
      {props.method === 'card' && <slot name="payment" />}
      <button class="primary" type="button" onClick={() => void submit()}>{t('pay', { price: props.price })}</button>
    </div>
  );
}
