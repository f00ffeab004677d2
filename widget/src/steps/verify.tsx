import { useEffect, useState } from 'preact/hooks';
import { useAction, useStep } from '../context.js';

/** The server lets a code be sent again once a minute, and takes 5 wrong attempts of one code (spec 8.4). */
const RESEND_AFTER_S = 60;
const ATTEMPTS_PER_CODE = 5;

/** Spec 3.2 `verify_email`: the six digits sent to the masked e-mail. */
export function VerifyStep() {
  const { api, t, boot, refresh } = useStep();
  const { busy, error, run } = useAction();
  const [code, setCode] = useState('');
  const [wait, setWait] = useState(RESEND_AFTER_S);

  useEffect(() => {
    if (wait <= 0) return;
    const timer = setTimeout(() => setWait(wait - 1), 1_000);
    return () => clearTimeout(timer);
  }, [wait]);

  // A wrong code is refused with its error; the server's state then says how many tries are left.
  const verify = async () => {
    try {
      await api.verify(code);
    } finally {
      await refresh();
    }
  };
  const left = boot.code_attempts_left;

  return (
    <form class="stack" onSubmit={(event) => { event.preventDefault(); void run(verify); }}>
      <h2>{t('verifyTitle')}</h2>
      <p>{t('verifySent', { hint: boot.email_hint ?? '' })}</p>
      <label>
        {t('codeLabel')}
        <input
          class="code"
          name="code"
          inputmode="numeric"
          autocomplete="one-time-code"
          pattern="[0-9]{6}"
          maxLength={6}
          required
          value={code}
          onInput={(event) => setCode(event.currentTarget.value.replace(/\D/g, '').slice(0, 6))}
        />
      </label>
      {left === 0 ? <p class="error" role="alert">{t('codeUsedUp')}</p> : error && <p class="error" role="alert">{error}</p>}
      {left !== undefined && left > 0 && left < ATTEMPTS_PER_CODE && <p class="muted" role="status">{t('attemptsLeft', { n: left })}</p>}
      <button class="primary" type="submit" disabled={busy || code.length !== 6 || left === 0}>{t('confirm')}</button>
      <button type="button" disabled={busy || wait > 0} onClick={() => void run(async () => { await api.resend(); setWait(RESEND_AFTER_S); setCode(''); await refresh(); })}>
        {wait > 0 ? t('resendIn', { seconds: wait }) : t('resend')}
      </button>
      <button class="link" type="button" aria-disabled={busy} onClick={() => void run(async () => { await api.cancelLink(); await refresh(); })}>
        {t('otherEmail')}
      </button>
    </form>
  );
}
