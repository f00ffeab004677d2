import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ConnectError, type Bootstrap, type ConnectApi, type Step } from './api.js';
import { Ctx, type StepContext } from './context.js';
import type { Announcer, CloseDetail, CloseReason, ErrorDetail } from './events.js';
import { errorText, translator, type Locale } from './messages.js';
import { AccountStep } from './steps/account.js';
import { ManageStep, RevokedStep } from './steps/end.js';
import { NumberStep } from './steps/number.js';
import { PaymentStep } from './steps/payment.js';
import { VerifyStep } from './steps/verify.js';

export interface AppProps {
  readonly api: ConnectApi;
  /** The component's language: the page's, or else the customer's once the session gives it (spec 4.6). */
  readonly localeFor: (customerLocale: string | null | undefined) => Locale;
  readonly announce: Announcer;
  readonly modal: boolean;
  readonly paymentSlot: () => HTMLElement;
  readonly close: (reason: CloseReason) => void;
  /** The screen now shown and the session's id once known: what `close` and every event report. */
  readonly onShown: (step: CloseDetail['step'], sessionId: string | undefined) => void;
}

const STEPS: Record<Exclude<Step, 'revoked'>, () => preact.JSX.Element> = {
  account: AccountStep,
  verify_email: VerifyStep,
  payment: PaymentStep,
  number: NumberStep,
  manage: ManageStep,
};

/**
 * The component: reads the bootstrap, shows the screen of its `step` (spec 3.2), and tells the host
 * when it is ready, when the step changes, when it completes, and when it cannot go on.
 */
export function App(props: AppProps) {
  const { api, announce } = props;
  const [boot, setBoot] = useState<Bootstrap>();
  const locale = props.localeFor(boot?.customer.locale);
  const t = useMemo(() => translator(locale), [locale]);
  const [ended, setEnded] = useState<Omit<ErrorDetail, 'sessionId'> | 'revoked'>();
  const shown = useRef<Step | undefined>(undefined);
  const heading = useRef<HTMLDivElement>(null);

  const fail = (error: ConnectError) => {
    const detail = { code: error.code, message: errorText(t, error.code, error.message) };
    if (error.code === 'connection_revoked') {
      setEnded('revoked');
      props.onShown('revoked', undefined);
      if (shown.current !== undefined && shown.current !== 'revoked') announce.step({ step: 'revoked' });
      else announce.error(detail);
      shown.current = 'revoked';
      return;
    }
    setEnded(detail);
    props.onShown('error', undefined);
    announce.error(detail);
  };

  const refresh = async () => {
    try {
      const next = await api.bootstrap();
      setBoot(next);
      props.onShown(next.step, next.session.id);
      if (shown.current === undefined) announce.ready({ step: next.step, connectionId: next.connection.id, status: next.status });
      else if (shown.current !== next.step) announce.step({ step: next.step });
      shown.current = next.step;
    } catch (caught) {
      fail(caught instanceof ConnectError ? caught : new ConnectError('internal_error', String(caught), 0));
    }
  };

  useEffect(() => void refresh(), []);
  // Each new screen takes the focus to its top, for keyboards and screen readers.
  useEffect(() => heading.current?.focus(), [boot?.step, ended]);

  let body: preact.JSX.Element;
  if (ended === 'revoked' || (ended === undefined && boot?.step === 'revoked')) body = <RevokedStep t={t} />;
  else if (ended !== undefined) {
    body = (
      <div class="stack">
        <h2>{t('errorTitle')}</h2>
        <p class="error" role="alert">{ended.message}</p>
        <button class="primary" type="button" onClick={() => props.close('dismissed')}>{t('close')}</button>
      </div>
    );
  } else if (boot === undefined) body = <p role="status">{t('loading')}</p>;
  else {
    const Screen = STEPS[boot.step as Exclude<Step, 'revoked'>];
    const ctx: StepContext = { api, t, locale, boot, announce, refresh, fail, paymentSlot: props.paymentSlot, done: () => props.close('done') };
    body = <Ctx.Provider value={ctx}><Screen key={boot.step} /></Ctx.Provider>;
  }

  const title = t('dialog', { partner: boot?.partner.name ?? '' });
  return (
    <div class="panel" lang={locale} role={props.modal ? 'dialog' : 'region'} aria-modal={props.modal ? 'true' : undefined} aria-label={title}>
      {/* Not a <header>: inside the host's page it would be a second banner landmark. */}
      <div class="bar">
        {boot?.partner.logo_url && <img src={boot.partner.logo_url} alt="" />}
        <span class="partner">{boot?.partner.name ?? ''}</span>
        <button class="icon" type="button" aria-label={t('close')} onClick={() => props.close('dismissed')}>×</button>
      </div>
      <div tabIndex={-1} ref={heading} data-step={ended === undefined ? boot?.step : ended === 'revoked' ? 'revoked' : 'error'}>
        {body}
      </div>
    </div>
  );
}
