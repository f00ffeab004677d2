import { useState } from 'preact/hooks';
import { useAction, useStep } from '../context.js';
import { Consent } from './consent.js';

/** Spec 3.2 `account`: create a new account, or link an existing one by an e-mailed code. */
export function AccountStep() {
  const { api, t, boot, refresh } = useStep();
  const { busy, error, run } = useAction();
  const [linking, setLinking] = useState(boot.existing !== undefined);
  const [email, setEmail] = useState(boot.customer.email);
  const existing = boot.existing;

  if (linking) {
    return (
      <form class="stack" onSubmit={(event) => { event.preventDefault(); void run(async () => { await api.link(email.trim()); await refresh(); }); }}>
        <h2>{t('link')}</h2>
        {existing === 'admin' && email === boot.customer.email && <p>{t('existingAdmin', { email: boot.customer.email })}</p>}
        {existing === 'member' && email === boot.customer.email && <p class="notice">{t('existingMember', { email: boot.customer.email })}</p>}
        <label>
          {t('emailLabel')}
          <input type="email" name="email" autocomplete="email" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} />
        </label>
        {error && <p class="error" role="alert">{error}</p>}
        <button class="primary" type="submit" aria-disabled={busy}>{t('sendCode')}</button>
        {existing === undefined && <button class="link" type="button" onClick={() => setLinking(false)}>{t('back')}</button>}
      </form>
    );
  }
  return (
    <div class="stack">
      <h2>{t('accountTitle')}</h2>
      <p>{t('accountQuestion', { service: boot.service.name })}</p>
      {error && <p class="error" role="alert">{error}</p>}
      <button class="primary" type="button" aria-disabled={busy} onClick={() => void run(async () => { await api.createAccount(); await refresh(); })}>
        {t('create')}
      </button>
      <p class="muted">{t('createHint', { email: boot.customer.email, service: boot.service.name })}</p>
      <Consent />
      <button type="button" aria-disabled={busy} onClick={() => setLinking(true)}>{t('link')}</button>
    </div>
  );
}
