import { useState } from 'preact/hooks';
import { api, type Me } from './api.js';
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
        <h1>Sign in</h1>
        <label>E-mail <input type="email" name="email" autocomplete="email" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} /></label>
        <ErrorLine error={error} />
        <button class="primary" type="submit" disabled={busy}>Send me a code</button>
      </form>
    );
  }
  return (
    <form class="card narrow" onSubmit={(event) => { event.preventDefault(); void run(async () => onSignedIn(await api.call<Me>('POST', '/panel/login/verify', { email, code }))); }}>
      <h1>Check your e-mail</h1>
      <p>If {email} may sign in, a six-digit code is on its way.</p>
      <label>Code <input name="code" inputmode="numeric" autocomplete="one-time-code" maxLength={6} required value={code} onInput={(event) => setCode(event.currentTarget.value)} /></label>
      <ErrorLine error={error} />
      <button class="primary" type="submit" disabled={busy}>Sign in</button>
      <button class="link" type="button" onClick={() => setSent(false)}>Use another e-mail</button>
    </form>
  );
}
