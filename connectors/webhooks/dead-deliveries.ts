import { newId } from '../../schemas/ids.js';
import type { DeliveryTargetKind, DeliveryTask } from '../../schemas/records.js';
import { readRange, topicName, topics, watermarks, type Kafka, type Producer, type TopicSerdes } from '../../topics/index.js';
import type { RetrySchedules } from './schedule.js';

/** A delivery given up on (`gw.deliveries.dead`), as an operator looks at it. */
export interface DeadDelivery {
  readonly delivery_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly target_kind: DeliveryTargetKind;
  /** The webhook id, or the partner id of a partner webhook. */
  readonly target_id: string;
  readonly attempts: number;
  readonly last_error: string | null;
  /** When it was given up on (ms). */
  readonly at: number;
}

export interface DeadDeliveryDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly schedules: RetrySchedules;
}

/** Which dead deliveries to send again: by delivery id, every one of an endpoint, or every one an earlier `all` did not send. */
export type DeadSelection =
  | { readonly kind: 'ids'; readonly ids: readonly string[] }
  | { readonly kind: 'endpoint'; readonly targetId: string }
  | { readonly kind: 'all' };

/** The dead deliveries the topic holds, oldest first; the last `limit` of them, of one endpoint when given. */
export async function listDeadDeliveries(deps: Omit<DeadDeliveryDeps, 'producer' | 'schedules'>, options: { limit: number; targetId?: string }): Promise<DeadDelivery[]> {
  const { dead } = await readDead(deps, undefined);
  const chosen = dead.filter(({ task }) => options.targetId === undefined || task.target_id === options.targetId);
  return chosen.slice(-options.limit).map(deadOf);
}

/**
 * Sends dead deliveries again, each once however often it was dead-lettered: a new delivery
 * (`trigger: manual`, attempt 1, its own retries) with the same event id and body, on the first
 * tier of its kind of target, due now. `all` sends those no earlier `all` sent: the group
 * `<prefix>dead-deliveries.redeliver` keeps how far it went.
 */
export async function redeliverDead(deps: DeadDeliveryDeps, selection: DeadSelection): Promise<DeadDelivery[]> {
  const group = `${deps.serdes.prefix}dead-deliveries.redeliver`;
  const { dead, read } = await readDead(deps, selection.kind === 'all' ? group : undefined);
  const wanted = selection.kind === 'ids' ? new Set(selection.ids) : undefined;
  const chosen = new Map<string, DeliveryTask>();
  for (const { task } of dead) {
    if (wanted !== undefined && !wanted.has(task.delivery_id)) continue;
    if (selection.kind === 'endpoint' && task.target_id !== selection.targetId) continue;
    chosen.set(task.delivery_id, task);
  }
  const missing = [...(wanted ?? [])].filter((id) => !chosen.has(id));
  if (missing.length > 0) throw new UnknownDeadDeliveries(missing);
  const now = Date.now();
  for (const task of chosen.values()) {
    const again: DeliveryTask = { ...task, occurred_at: now, delivery_id: newId('dlv'), trigger: 'manual', attempt: 1, not_before: now, last_error: null };
    await deps.producer.send(deps.schedules[task.target_kind].retries[0].tier, [{ key: task.target_id, value: again }]);
  }
  if (selection.kind === 'all') await markRead(deps, group, read);
  return [...chosen.values()].map((task) => deadOf({ task, at: task.occurred_at }));
}

/** Ids asked for that the dead-letter topic does not hold (never dead, or deleted by retention): nothing was sent. */
export class UnknownDeadDeliveries extends Error {
  override readonly name = 'UnknownDeadDeliveries';

  constructor(readonly ids: readonly string[]) {
    super(`no dead delivery ${ids.join(', ')}`);
  }
}

interface Read {
  readonly task: DeliveryTask;
  readonly at: number;
}

/**
 * Every dead delivery the topic holds (after the group's committed position when `group` is
 * given), and where the reading stopped in each partition.
 */
async function readDead(deps: Pick<DeadDeliveryDeps, 'kafka' | 'serdes'>, group: string | undefined): Promise<{ dead: Read[]; read: Map<number, number> }> {
  const topic = topicName(topics.deliveryDead, deps.serdes.prefix);
  const marks = await watermarks(deps.kafka, topic);
  const done = group === undefined ? new Map<number, number>() : await committed(deps.kafka, group, topic);
  const from = new Map([...marks].map(([p, { low }]) => [p, Math.max(low, done.get(p) ?? -1)]));
  const to = new Map([...marks].map(([p, { high }]) => [p, high]));
  const records = await readRange(deps, topics.deliveryDead, from, to);
  const dead = records
    .flatMap((record) => (record.decoded.ok && record.decoded.value !== null ? [{ task: record.decoded.value, at: record.timestamp }] : []))
    .sort((a, b) => a.at - b.at);
  return { dead, read: to };
}

async function committed(kafka: Kafka, group: string, topic: string): Promise<Map<number, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    return new Map((offsets?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  } finally {
    await admin.disconnect();
  }
}

/** Moves the group past what was read: what `all` sent is not sent by the next `all`, and what came since is. */
async function markRead(deps: Pick<DeadDeliveryDeps, 'kafka' | 'serdes'>, group: string, read: ReadonlyMap<number, number>): Promise<void> {
  const topic = topicName(topics.deliveryDead, deps.serdes.prefix);
  const admin = deps.kafka.admin();
  await admin.connect();
  try {
    await admin.setOffsets({ groupId: group, topic, partitions: [...read].map(([partition, offset]) => ({ partition, offset: String(offset) })) });
  } finally {
    await admin.disconnect();
  }
}

function deadOf({ task, at }: Read): DeadDelivery {
  return {
    delivery_id: task.delivery_id,
    event_id: task.event_id,
    event_type: task.event_type,
    target_kind: task.target_kind,
    target_id: task.target_id,
    attempts: task.attempt - 1,
    last_error: task.last_error,
    at,
  };
}
