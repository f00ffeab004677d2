import { asAccountId, asEventId, asProjectId, newId } from '../../schemas/ids.js';
import type { ConfigRecord, Webhook } from '../../schemas/records.js';
import type { WebhookEntry } from '../directory.js';
import { changeConfigAlone, type ConfigLock, type ConfigLockDeps } from './lock.js';
import { ConfigRefused } from './refused.js';
import { writeConfig, type ConfigWriter } from './write.js';

export type WebhookFields = Omit<Webhook, 'kind'>;

/** The lock under which a project's webhooks change: one webhook per event (spec 6.2) is checked under it. */
export function webhooksLock(projectId: string): ConfigLock {
  return { kind: 'webhooks', id: projectId };
}

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

/** Writes a webhook's full state; to be called under `webhooksLock` of its project. */
export function writeWebhook(writer: ConfigWriter, owner: { accountId: string; projectId: string }, id: string, fields: WebhookFields, at?: number): Promise<void> {
  return writeConfig(writer, id, webhookRecord(owner, id, fields, at));
}

/** Deletes a webhook of the project, alone among the project's webhook changes; `not_found` when the project has none of that id. */
export async function removeWebhook(deps: ConfigLockDeps & ConfigWriter, input: { readonly projectId: string; readonly id: string }): Promise<void> {
  await changeConfigAlone(deps, webhooksLock(input.projectId), async () => {
    if (deps.directory.webhooks.get(input.id)?.project_id !== input.projectId) throw new ConfigRefused('not_found');
    await writeConfig(deps, input.id, null);
  });
}
