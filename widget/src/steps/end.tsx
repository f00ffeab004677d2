import { useStep } from '../context.js';
import { statusText, type Translate } from '../messages.js';

/** Spec 3.2 `manage`: the connection is complete; its numbers and their status. */
export function ManageStep() {
  const { t, boot, done } = useStep();
  return (
    <div class="stack">
      <h2>{t('manageTitle')}</h2>
      <p>{t('manageText', { partner: boot.partner.name })}</p>
      <ul class="numbers">
        {boot.numbers.map((n) => (
          <li key={n.id}>
            <span>{n.phone ?? n.id}</span>
            <span class="muted">{statusText(t, n.status)}</span>
          </li>
        ))}
      </ul>
      <button class="primary" type="button" onClick={done}>{t('done')}</button>
    </div>
  );
}

/** Spec 3.2 `revoked`: the connection ended; nothing more to do here. */
export function RevokedStep({ t }: { t: Translate }) {
  return (
    <div class="stack">
      <h2>{t('revokedTitle')}</h2>
      <p>{t('revokedText')}</p>
    </div>
  );
}
