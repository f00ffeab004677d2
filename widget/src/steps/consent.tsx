import type { ComponentChild } from 'preact';
import { useStep } from '../context.js';
import { scopeText } from '../messages.js';

/**
 * The terms and privacy policy of the service, linked where the operator configured them
 * (`SERVICE_TERMS_URL`, `SERVICE_PRIVACY_URL`); nothing when neither is.
 */
export function Consent() {
  const { t, boot } = useStep();
  const { name, terms_url: terms, privacy_url: privacy } = boot.service;
  if (terms === null && privacy === null) return null;
  const link = (url: string | null, label: string) => (url === null ? label : <a href={url} target="_blank" rel="noopener noreferrer">{label}</a>);
  const parts: Record<string, ComponentChild> = { terms: link(terms, t('terms')), privacy: link(privacy, t('privacy')), service: name };
  // The sentence is translated whole; the links go where its placeholders are.
  const pieces = t('termsNotice').split(/\{(\w+)\}/).map((piece, i) => (i % 2 === 1 ? (parts[piece] ?? piece) : piece));
  return <p class="muted">{pieces}</p>;
}

/** What the partner's key will be allowed to do, in the customer's words; a scope without words as it is. */
export function Scopes() {
  const { t, boot } = useStep();
  if (boot.partner.scopes.length === 0) return null;
  return (
    <div>
      <p>{t('scopesIntro', { partner: boot.partner.name })}</p>
      <ul class="scopes">
        {boot.partner.scopes.map((scope) => (
          <li key={scope}>{scopeText(t, scope)}</li>
        ))}
      </ul>
    </div>
  );
}
