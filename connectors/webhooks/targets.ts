import type { Directory, WebhookEntry } from '../../processors/directory.js';
import type { Audience } from '../../events/envelope.js';
import { isStreamOnly, isWebhookEventType, listensTo } from '../../events/catalogue.js';
import type { DeliveryTargetKind, PublicEvent } from '../../schemas/records.js';

/**
 * Where one event goes. Each kind has its resolver below and the audience its body is rendered
 * for; partner webhooks (a later issue) add a `partner_webhook` kind and a resolver.
 */
export interface Target {
  readonly kind: DeliveryTargetKind;
  /** Webhook id (the record key of tasks and attempts, and the key of the endpoint limiter). */
  readonly id: string;
  readonly audience: Audience;
}

type Resolver = (event: PublicEvent, directory: Directory) => Target[];

const accountWebhook = (webhook: WebhookEntry): Target => ({ kind: 'account_webhook', id: webhook.id, audience: 'account' });

/**
 * Account and project webhooks (spec 6.1): a test event goes to its one webhook only, enabled or
 * not (the user asked for it); an account-scope event to every enabled webhook of the account that
 * listens to it; any other event to the enabled webhooks of its project that listen to it.
 */
const accountWebhooks: Resolver = (event, directory) => {
  if (event.trigger === 'test') {
    const webhook = event.webhook_id === null ? undefined : directory.webhooks.get(event.webhook_id);
    return webhook !== undefined && webhook.account_id === event.account_id ? [accountWebhook(webhook)] : [];
  }
  const candidates =
    event.scope === 'account'
      ? directory.webhooksOfAccount(event.account_id)
      : event.project_id === null
        ? []
        : directory.webhooksOf(event.project_id);
  return candidates.filter((w) => w.enabled && listensTo(w.event_types, event.event_type)).map(accountWebhook);
};

const resolvers: readonly Resolver[] = [accountWebhooks];

/** Every target of an event; none for stream-only events and names outside the webhook catalogue. */
export function targetsOf(event: PublicEvent, directory: Directory): Target[] {
  if (isStreamOnly(event.event_type) || !isWebhookEventType(event.event_type)) return [];
  return resolvers.flatMap((resolve) => resolve(event, directory));
}
