import { useState } from 'preact/hooks';
import { api, type Me } from './api.js';
import { t } from './i18n.js';
import { ErrorLine, useAction } from './ui.js';

/** Sign-in without a password: an e-mail, then the six digits sent to it. */
export function Login({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [sent, setSent] = useState(false);
  const { busy, error, run } = useAction();

  if (!sent) {
    return (
      <form class="card narrow" onSubmit={(event) => { event.preventDefault(); void run(async () => { await api.call('POST', '/panel/login', { email }); setSent(true); }); }}>
        <h1>{t('signIn')}</h1>
        <label>{t('email')} <input type="email" name="email" autocomplete="email" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} /></label>
        <ErrorLine error={error} />
        <button class="primary" type="submit" disabled={busy}>{t('sendCode')}</button>
      </form>
    );
  }
  return (
    <form class="card narrow" onSubmit={(event) => { event.preventDefault(); void run(async () => onSignedIn(await api.call<Me>('POST', '/panel/login/verify', { email, code }))); }}>
      <h1>{t('checkEmail')}</h1>
      <p>{t('codeOnItsWay', { email })}</p>
      <label>{t('code')} <input name="code" inputmode="numeric" autocomplete="one-time-code" maxLength={6} required value={code} onInput={(event) => setCode(event.currentTarget.value)} /></label>
      <ErrorLine error={error} />
      <button class="primary" type="submit" disabled={busy}>{t('signIn')}</button>
      <button class="link" type="button" onClick={() => setSent(false)}>{t('otherEmail')}</button>
    </form>
  );
}
