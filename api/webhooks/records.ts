import { asAccountId, asEventId, asProjectId, newId } from '../../schemas/ids.js';
import type { ConfigRecord, Webhook } from '../../schemas/records.js';
import type { WebhookEntry } from '../../processors/directory.js';

export type WebhookFields = Omit<Webhook, 'kind'>;

/**
 * The `gw.config` record of a webhook's current state (the whole entity: the topic is compacted).
 * A creation happens when the webhook is created, so a new webhook's `updated_at` equals its `created_at`.
 */
export function webhookRecord(owner: { accountId: string; projectId: string }, id: string, fields: WebhookFields, at = Date.now()): ConfigRecord {
  return {
    event_id: asEventId(newId('cfg')),
    occurred_at: at,
    account_id: asAccountId(owner.accountId),
    project_id: asProjectId(owner.projectId),
    instance_id: null,
    entity_id: id,
    entity: { kind: 'webhook', ...fields },
  };
}

/** The stored fields of a webhook as the directory holds it (all but what the record carries around it), to write it again with changes. */
export function fieldsOf(webhook: WebhookEntry): WebhookFields {
  const { id: _id, account_id: _account, project_id: _project, updated_at: _updated, ...fields } = webhook;
  return fields;
}

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
