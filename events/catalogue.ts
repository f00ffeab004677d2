/**
 * The public events of spec 6.1, and the few that only streams carry. Every name here is the
 * `event_type` of a `gateway.events.PublicEvent` record on `gw.events`.
 */
export const webhookEventTypes = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.edited',
  'message.deleted',
  'instance.connected',
  'instance.warming',
  'instance.disconnected',
  'instance.logged_out',
  'instance.banned',
  'group.joined',
  'group.left',
  'group.participant_added',
  'group.participant_removed',
  'group.participant_promoted',
  'group.participant_demoted',
  'group.subject_changed',
  'group.description_changed',
  'contact.opted_out',
  'campaign.paused',
  'usage.threshold',
  'advisory.published',
  'call.received',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/**
 * Stream-only events (spec 6.1 rule 2): pairing secrets and every status change of a number.
 * They ride on `gw.events` so that a stream reads one topic and resumes from one position, but no
 * webhook, partner or `/webhooks/listen` client ever receives them.
 */
export const streamOnlyEventTypes = ['qr_code', 'pairing_code', 'instance.status'] as const;
export type StreamOnlyEventType = (typeof streamOnlyEventTypes)[number];

/** Account-scope events: no project, no instance_id, delivered to every webhook of the account. */
export const accountEventTypes: ReadonlySet<string> = new Set<WebhookEventType>(['usage.threshold', 'advisory.published']);

const webhookTypes: ReadonlySet<string> = new Set(webhookEventTypes);
const streamOnlyTypes: ReadonlySet<string> = new Set(streamOnlyEventTypes);

export function isWebhookEventType(name: string): name is WebhookEventType {
  return webhookTypes.has(name);
}

export function isStreamOnly(name: string): name is StreamOnlyEventType {
  return streamOnlyTypes.has(name);
}

/** Whether a webhook listening to `eventTypes` (empty: all) receives `eventType`. */
export function listensTo(eventTypes: readonly string[], eventType: string): boolean {
  if (!isWebhookEventType(eventType)) return false;
  return eventTypes.length === 0 || eventTypes.includes(eventType);
}

/**
 * Lifecycle events of a partner connection (spec 6.4): rendered from `gw.connections`, scope
 * `connection`, with the connection block; they go only to the partner that owns the connection.
 */
export const connectEventTypes = ['connect.completed', 'connect.suspended', 'connect.resumed', 'connect.revoked'] as const;
export type ConnectEventType = (typeof connectEventTypes)[number];

/**
 * Operation events a partner receives for the projects of its `active` connections (spec 6.4):
 * messages, numbers, opt-outs and groups; not campaign.paused nor the account events.
 */
export const partnerOperationEventTypes: readonly WebhookEventType[] = webhookEventTypes.filter(
  (type) => type.startsWith('message.') || type.startsWith('instance.') || type.startsWith('group.') || type === 'contact.opted_out',
);

const connectTypes: ReadonlySet<string> = new Set(connectEventTypes);
const partnerOperationTypes: ReadonlySet<string> = new Set(partnerOperationEventTypes);

export function isConnectEventType(name: string): name is ConnectEventType {
  return connectTypes.has(name);
}

export function isPartnerOperationEventType(name: string): boolean {
  return partnerOperationTypes.has(name);
}
