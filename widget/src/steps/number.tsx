import { useEffect, useRef, useState } from 'preact/hooks';
import type { NumberInfo } from '../api.js';
import { useAction, useStep } from '../context.js';
import { qrPath } from '../qr.js';
import { Scopes } from './consent.js';

type Challenge = { readonly kind: 'qr' | 'code'; readonly value: string } | { readonly kind: 'waiting' };

const LIVE = new Set(['connected', 'warming']);
const ASK_AGAIN_MS = 8_000;
/** Asks for a code that does not come, before the step says so and offers to ask again. */
const MAX_ASKS = 3;

/** On a phone the QR would have to be scanned by the very phone that shows it: the code comes first there. */
const firstMethod = (): 'qr' | 'code' => (matchMedia('(pointer: coarse)').matches ? 'code' : 'qr');

/** The partner receives its code (spec 4.5) and the component moves on to `manage`. */
function useComplete() {
  const { api, announce, refresh } = useStep();
  return async () => {
    const done = await api.complete();
    announce.complete({ code: done.code, connectionId: done.connection_id, externalId: done.external_id });
    await refresh();
  };
}

/**
 * Spec 3.2 `number`: a number of the project is paired by QR or by pairing code, live from
 * `/connect/stream`; once it is connected the connection completes. A number already connected
 * needs only the customer's authorisation (spec 4.5).
 */
export function NumberStep() {
  const { api, t, boot } = useStep();
  const { busy, error, run } = useAction();
  const complete = useComplete();
  const [number, setNumber] = useState<NumberInfo | undefined>(boot.numbers.find((n) => !LIVE.has(n.status)));
  const [challenge, setChallenge] = useState<Challenge | undefined>();
  const connected = boot.numbers.find((n) => LIVE.has(n.status));
  const pairing = useRef<string | undefined>(undefined);
  const stream = useRef<Promise<void> | undefined>(undefined);
  // Numbers live when the step opened wait for the customer's authorisation; any other that comes
  // alive was paired by this customer, from this screen or with a code shown before a reopen.
  const liveAtStart = useRef(new Set(boot.numbers.filter((n) => LIVE.has(n.status)).map((n) => n.id)));
  const [late, setLate] = useState(false);
  const first = useRef(firstMethod()).current;

  // One stream for the step, open before any pairing starts: codes of the number being paired, and
  // the status of every number of the project.
  useEffect(() => {
    const { opened, close } = api.stream((type, payload) => {
      const id = String(payload.instance_id);
      if (type === 'instance.status' && LIVE.has(String(payload.status)) && !liveAtStart.current.has(id)) {
        liveAtStart.current.add(id);
        return void run(complete);
      }
      if (id !== pairing.current) return;
      if (type === 'qr_code' && typeof payload.qr_code === 'string') setChallenge({ kind: 'qr', value: payload.qr_code });
      if (type === 'pairing_code' && typeof payload.pairing_code === 'string') setChallenge({ kind: 'code', value: payload.pairing_code });
    });
    stream.current = opened;
    return close;
  }, []);

  const asked = useRef<'qr' | 'code' | undefined>(undefined);
  const asks = useRef(0);
  const pair = (method: 'qr' | 'code') =>
    run(async () => {
      const target = number ?? (await api.addNumber());
      setNumber(target);
      pairing.current = target.id;
      asked.current = method;
      asks.current = 1;
      setLate(false);
      setChallenge({ kind: 'waiting' });
      await stream.current;
      await api.pair(target.id, method);
    });

  // A code that does not come within a few seconds: the server's state is read again (a number may
  // have connected meanwhile, and the connection completes), and the code asked for once more, as
  // a customer would; after a few tries the step says so and the buttons ask again.
  useEffect(() => {
    if (challenge?.kind !== 'waiting' || pairing.current === undefined || asked.current === undefined) return;
    const id = pairing.current;
    const method = asked.current;
    const timer = setTimeout(
      () =>
        void run(async () => {
          const now = await api.bootstrap();
          if (now.numbers.some((n) => LIVE.has(n.status) && !liveAtStart.current.has(n.id))) return complete();
          if (asks.current >= MAX_ASKS) {
            setChallenge(undefined);
            setLate(true);
            return;
          }
          asks.current += 1;
          await api.pair(id, method);
          setChallenge({ kind: 'waiting' });
        }),
      ASK_AGAIN_MS,
    );
    return () => clearTimeout(timer);
  }, [challenge]);

  if (connected !== undefined && challenge === undefined) {
    return (
      <div class="stack">
        <h2>{t('numberTitle')}</h2>
        <p>{t('authorizeHelp', { phone: connected.phone ?? '', partner: boot.partner.name })}</p>
        <Scopes />
        {error && <p class="error" role="alert">{error}</p>}
        <button class="primary" type="button" aria-disabled={busy} onClick={() => void run(complete)}>{t('authorize', { partner: boot.partner.name })}</button>
      </div>
    );
  }
  return (
    <div class="stack">
      <h2>{t('numberTitle')}</h2>
      {challenge?.kind === 'qr' && <QrCode value={challenge.value} label={t('qrAlt')} help={t('scanHelp')} />}
      {challenge?.kind === 'code' && (
        <div>
          <p>{t('codeHelp')}</p>
          <p class="pairing" aria-live="polite">{`${challenge.value.slice(0, 4)}-${challenge.value.slice(4)}`}</p>
        </div>
      )}
      {challenge?.kind === 'waiting' && <p role="status">{t('preparing')}</p>}
      {late && <p class="error" role="alert">{t('codeLate')}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {(first === 'qr' ? (['qr', 'code'] as const) : (['code', 'qr'] as const)).map((method) => (
        <button key={method} class={challenge === undefined && method === first ? 'primary' : ''} type="button" aria-disabled={busy} onClick={() => void pair(method)}>
          {challenge?.kind === method ? t('newCode') : t(method === 'qr' ? 'byQr' : 'byCode')}
        </button>
      ))}
    </div>
  );
}

function QrCode(props: { value: string; label: string; help: string }) {
  const { size, path } = qrPath(props.value);
  return (
    <div>
      <p>{props.help}</p>
      <svg class="qr" role="img" aria-label={props.label} viewBox={`0 0 ${size} ${size}`} shape-rendering="crispEdges" data-qr={props.value}>
        <path d={path} fill="#000" />
      </svg>
    </div>
  );
}
