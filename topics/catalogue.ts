import type * as R from '../schemas/records.js';

/**
 * One topic of the log. `V` is the TypeScript shape of its values; `schema` names the Avro record
 * in `schemas/` that encodes them (subject `<topic>-value` in the registry).
 */
export interface TopicSpec<V> {
  readonly name: string;
  /** What the record key is: it decides ordering and, for connectors, placement. */
  readonly key: string;
  readonly schema: string;
  readonly partitions: number;
  readonly cleanup: 'delete' | 'compact';
  /** Kept for this long (delete topics); absent means forever. */
  readonly retentionMs?: number;
  /**
   * `append`: the broker stamps each record with the time it took it (`LogAppendTime`), so a
   * deadline carried in a record can be held against the moment the log accepted it.
   */
  readonly timestamps?: 'append';
  /**
   * Its records carry a copy of another topic's record (a delivery task an event's body, a dead
   * letter the original bytes): it accepts records twice the broker's `message.max.bytes`.
   */
  readonly holdsCopies?: true;
  /** Phantom: never set, only carries `V`. */
  readonly value?: V;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function topic<V>(spec: Omit<TopicSpec<V>, 'value'>): TopicSpec<V> {
  return Object.freeze(spec);
}

export const topics = {
  sendCommands: topic<R.SendCommand>({
    name: 'gw.commands.send', key: 'instance id', schema: 'gateway.messages.SendCommand',
    partitions: 12, cleanup: 'delete', retentionMs: 7 * DAY, timestamps: 'append',
  }),
  messageStatus: topic<R.MessageStatus>({
    name: 'gw.messages.status', key: 'instance id', schema: 'gateway.messages.MessageStatus',
    partitions: 12, cleanup: 'delete', retentionMs: 30 * DAY,
  }),
  inboundMessages: topic<R.InboundMessage>({
    name: 'gw.messages.inbound', key: 'instance id', schema: 'gateway.messages.InboundMessage',
    partitions: 12, cleanup: 'delete', retentionMs: 30 * DAY,
  }),
  messageStates: topic<R.MessageState>({
    name: 'gw.messages.state', key: 'message id', schema: 'gateway.messages.MessageState',
    partitions: 12, cleanup: 'compact',
  }),
  instances: topic<R.InstanceState>({
    name: 'gw.instances', key: 'instance id', schema: 'gateway.instances.InstanceState',
    partitions: 12, cleanup: 'compact',
  }),
  pairing: topic<R.PairingChallenge>({
    name: 'gw.instances.pairing', key: 'instance id', schema: 'gateway.instances.PairingChallenge',
    partitions: 12, cleanup: 'delete', retentionMs: HOUR,
  }),
  groups: topic<R.GroupEvent>({
    name: 'gw.groups', key: 'instance id', schema: 'gateway.groups.GroupEvent',
    partitions: 12, cleanup: 'delete', retentionMs: 30 * DAY,
  }),
  contacts: topic<R.ContactEvent>({
    name: 'gw.contacts', key: 'account id', schema: 'gateway.contacts.ContactEvent',
    partitions: 6, cleanup: 'delete', retentionMs: 30 * DAY,
  }),
  contactStates: topic<R.ContactState>({
    name: 'gw.contacts.state', key: 'contact id', schema: 'gateway.contacts.ContactState',
    partitions: 6, cleanup: 'compact',
  }),
  audience: topic<R.AudienceRecord>({
    name: 'gw.audience', key: 'entity id', schema: 'gateway.audience.AudienceRecord',
    partitions: 6, cleanup: 'compact',
  }),
  config: topic<R.ConfigRecord>({
    name: 'gw.config', key: 'entity id', schema: 'gateway.config.ConfigRecord',
    partitions: 6, cleanup: 'compact',
  }),
  connections: topic<R.ConnectionTransition>({
    name: 'gw.connections', key: 'connection id', schema: 'gateway.connect.ConnectionTransition',
    partitions: 6, cleanup: 'compact',
  }),
  events: topic<R.PublicEvent>({
    name: 'gw.events', key: 'project id', schema: 'gateway.events.PublicEvent',
    partitions: 12, cleanup: 'delete', retentionMs: 7 * DAY,
  }),
  deliveryAttempts: topic<R.DeliveryAttempt>({
    name: 'gw.deliveries.attempts', key: 'webhook id', schema: 'gateway.webhooks.DeliveryAttempt',
    partitions: 6, cleanup: 'delete', retentionMs: 30 * DAY, holdsCopies: true,
  }),
  deliveryDead: topic<R.DeliveryTask>({
    name: 'gw.deliveries.dead', key: 'webhook id', schema: 'gateway.webhooks.DeliveryTask',
    partitions: 6, cleanup: 'delete', retentionMs: 30 * DAY, holdsCopies: true,
  }),
  numberCommands: topic<R.NumberCommand>({
    name: 'gw.commands.numbers', key: 'instance id', schema: 'gateway.instances.NumberCommand',
    partitions: 12, cleanup: 'delete', retentionMs: DAY,
  }),
  numberQueries: topic<R.NumberQuery>({
    name: 'gw.commands.queries', key: 'instance id', schema: 'gateway.instances.NumberQuery',
    partitions: 12, cleanup: 'delete', retentionMs: HOUR,
  }),
  numberReplies: topic<R.NumberReply>({
    name: 'gw.numbers.replies', key: 'request id', schema: 'gateway.instances.NumberReply',
    partitions: 3, cleanup: 'delete', retentionMs: HOUR,
  }),
  sandboxCommands: topic<R.SandboxCommand>({
    name: 'gw.sandbox.commands', key: 'instance id', schema: 'gateway.sandbox.SandboxCommand',
    partitions: 12, cleanup: 'delete', retentionMs: DAY,
  }),
  payments: topic<R.PaymentRecord>({
    name: 'gw.payments', key: 'account id', schema: 'gateway.payments.PaymentRecord',
    partitions: 6, cleanup: 'delete', retentionMs: 400 * DAY,
  }),
  // Billing facts (media stored and removed, thresholds fired), few and small: kept for ever, so
  // usage is rebuilt at any age.
  usage: topic<R.UsageRecord>({
    name: 'gw.usage', key: 'account id', schema: 'gateway.usage.UsageRecord',
    partitions: 6, cleanup: 'delete',
  }),
  // Who did what and from where (rotations, revocations, disconnects, people): kept 400 days, the
  // span an auditor asks about (a year and its reporting month).
  audit: topic<R.AuditRecord>({
    name: 'gw.audit', key: 'account id', schema: 'gateway.audit.AuditRecord',
    partitions: 3, cleanup: 'delete', retentionMs: 400 * DAY,
  }),
  // A campaign's latest state and its recipients, written once at creation: small, and what a
  // replay of the campaigns projection rebuilds them from, so kept for ever.
  campaigns: topic<R.CampaignState>({
    name: 'gw.campaigns', key: 'campaign id', schema: 'gateway.campaigns.CampaignState',
    partitions: 6, cleanup: 'compact',
  }),
  campaignRecipients: topic<R.CampaignRecipients>({
    name: 'gw.campaigns.recipients', key: 'campaign id:chunk', schema: 'gateway.campaigns.CampaignRecipients',
    partitions: 6, cleanup: 'compact',
  }),
  calls: topic<R.CallEvent>({
    name: 'gw.calls', key: 'instance id', schema: 'gateway.calls.CallEvent',
    partitions: 12, cleanup: 'delete', retentionMs: 30 * DAY,
  }),
} as const;

/**
 * The retry tier of one delay, `gw.deliveries.retry.<delay>` (`10s`, `1m`, `1500ms`): it holds
 * tasks that all wait this long, so its order is the order they fall due. Kept a comfortable
 * multiple of the delay, and a day at least, so tasks outlive a dispatcher outage.
 */
export function deliveryRetryTier(delayMs: number): TopicSpec<R.DeliveryTask> {
  return topic<R.DeliveryTask>({
    name: `gw.deliveries.retry.${durationLabel(delayMs)}`, key: 'webhook id', schema: 'gateway.webhooks.DeliveryTask',
    partitions: 6, cleanup: 'delete', retentionMs: Math.max(DAY, 72 * delayMs), holdsCopies: true,
  });
}

const UNITS: readonly (readonly [string, number])[] = [['h', HOUR], ['m', 60_000], ['s', 1_000], ['ms', 1]];

/** A duration in the largest unit that writes it whole: `10s`, `1m`, `1h`, `90s`, `1500ms`. */
export function durationLabel(ms: number): string {
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`a duration label needs a positive whole number of ms, got ${ms}`);
  const [unit, size] = UNITS.find(([, size]) => ms % size === 0)!;
  return `${ms / size}${unit}`;
}

export type TopicCatalogue = typeof topics;
export type AnyTopic = TopicCatalogue[keyof TopicCatalogue];

/**
 * Records a processor could not decode or apply for a reason that retrying cannot fix. The
 * original bytes are kept as they were, with headers naming the processor and the error.
 */
export const deadLetterTopic = Object.freeze({
  name: 'gw.processors.dead', key: 'original key', partitions: 3, cleanup: 'delete' as const, retentionMs: 30 * DAY, holdsCopies: true as const,
});

/** The name a topic has on the cluster, after the configured prefix. */
export function topicName(spec: { readonly name: string }, prefix: string): string {
  return `${prefix}${spec.name}`;
}

/** Registry subject of a topic's values (the Confluent TopicNameStrategy). */
export function valueSubject(spec: { readonly name: string }, prefix: string): string {
  return `${topicName(spec, prefix)}-value`;
}
