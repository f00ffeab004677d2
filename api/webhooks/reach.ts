import type { Directory, WebhookEntry } from '../../processors/directory.js';
import { gatewayError } from '../errors.js';

/** Route configs: partner-issued keys never reach `/webhooks*` (spec 5). */
export const readAccess = { scope: 'webhooks:read' as const, partnerKeys: false };
export const writeAccess = { scope: 'webhooks:write' as const, partnerKeys: false };

/** A webhook of the caller's project; one of another project is as unknown as a missing one (404). */
export function ownWebhook(directory: Directory, projectId: string, id: string): WebhookEntry {
  const webhook = directory.webhooks.get(id);
  if (!webhook || webhook.project_id !== projectId) throw gatewayError('not_found');
  return webhook;
}
