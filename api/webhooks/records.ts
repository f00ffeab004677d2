import type { WebhookEntry } from '../../processors/directory.js';

/** The public webhook object: never the secret. */
export function webhookOut(webhook: WebhookEntry) {
  return {
    id: webhook.id,
    url: webhook.url,
    event_types: [...webhook.event_types],
    enabled: webhook.enabled,
    description: webhook.description,
    created_at: new Date(webhook.created_at).toISOString(),
    updated_at: new Date(webhook.updated_at).toISOString(),
  };
}
