import type { Kafka } from 'kafkajs';
import { watermarks } from './admin.js';
import { deadLetterTopic, topicName } from './catalogue.js';
import type { ConsumedRecord } from './consumer.js';
import { readRange } from './range-reader.js';
import type { Producer } from './producer.js';
import type { TopicSerdes } from './serdes.js';

/** A record on `gw.processors.dead`, as an operator looks at it. */
export interface DeadLetter {
  /** Where the dead letter itself sits: `partition:offset`, what `retry` takes. */
  readonly id: string;
  /** Where the original record sat. */
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** The consumer (or projection) that gave up on it. */
  readonly by: string;
  readonly reason: string;
  /** When it was given up on (ms). */
  readonly at: number;
}

/** Header a re-driven record carries: the dead letter it came from (`partition:offset`). */
export const REDRIVEN_FROM = 'x-redriven-from';
const DEAD_PREFIX = 'x-dead-';

export interface DeadLetterDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
}

/** The last `limit` dead letters of each partition, oldest first. */
export async function listDeadLetters(deps: Omit<DeadLetterDeps, 'producer'>, limit: number): Promise<DeadLetter[]> {
  const marks = await watermarks(deps.kafka, deadTopic(deps.serdes));
  const from = new Map([...marks].map(([p, { low, high }]) => [p, Math.max(low, high - limit)]));
  const records = await readRange(deps, deadLetterTopic, from, highs(marks));
  return records.map(deadLetterOf).sort((a, b) => a.at - b.at).slice(-limit);
}

/**
 * Writes dead letters back to their original topics: the original bytes, key and headers (less
 * the `x-dead-*` ones), with `x-redriven-from` naming the dead letter. Ids are `partition:offset`.
 */
export async function redrive(deps: DeadLetterDeps, ids: readonly string[]): Promise<DeadLetter[]> {
  const wanted = ids.map(parseId);
  const marks = await watermarks(deps.kafka, deadTopic(deps.serdes));
  for (const { partition, offset } of wanted) {
    const held = marks.get(partition);
    if (!held || offset < held.low || offset >= held.high) throw new Error(`no dead letter at ${partition}:${offset}`);
  }
  const from = new Map<number, number>();
  const to = new Map<number, number>();
  for (const { partition, offset } of wanted) {
    from.set(partition, Math.min(from.get(partition) ?? offset, offset));
    to.set(partition, Math.max(to.get(partition) ?? 0, offset + 1));
  }
  const records = await readRange(deps, deadLetterTopic, from, to);
  const byId = new Map(records.map((r) => [`${r.partition}:${r.offset}`, r]));
  const chosen = wanted.map(({ partition, offset }) => {
    const record = byId.get(`${partition}:${offset}`);
    if (!record) throw new Error(`no dead letter at ${partition}:${offset}`);
    return record;
  });
  return send(deps, chosen);
}

/**
 * Re-drives every dead letter no earlier `redriveAll` did: the group `<prefix>dead-letters.redrive`
 * keeps how far it went in each partition.
 */
export async function redriveAll(deps: DeadLetterDeps): Promise<DeadLetter[]> {
  const topic = deadTopic(deps.serdes);
  const groupId = `${deps.serdes.prefix}dead-letters.redrive`;
  const marks = await watermarks(deps.kafka, topic);
  const admin = deps.kafka.admin();
  await admin.connect();
  try {
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const done = new Map((committed?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
    const from = new Map([...marks].map(([p, { low }]) => [p, Math.max(low, done.get(p) ?? -1)]));
    const redriven = await send(deps, await readRange(deps, deadLetterTopic, from, highs(marks)));
    await admin.setOffsets({ groupId, topic, partitions: [...marks].map(([partition, { high }]) => ({ partition, offset: String(high) })) });
    return redriven;
  } finally {
    await admin.disconnect();
  }
}

async function send(deps: DeadLetterDeps, records: readonly ConsumedRecord<unknown>[]): Promise<DeadLetter[]> {
  const letters = records.map(deadLetterOf);
  for (const [i, record] of records.entries()) {
    const letter = letters[i]!;
    const headers = Object.fromEntries(Object.entries(record.headers).filter(([name]) => !name.startsWith(DEAD_PREFIX)));
    await deps.producer.sendRaw(letter.topic, [{ key: record.key, value: record.raw, headers: { ...headers, [REDRIVEN_FROM]: letter.id } }]);
  }
  return letters;
}

function deadLetterOf(record: ConsumedRecord<unknown>): DeadLetter {
  const h = record.headers;
  return {
    id: `${record.partition}:${record.offset}`,
    topic: h['x-dead-topic'] ?? '',
    partition: Number(h['x-dead-partition'] ?? -1),
    offset: Number(h['x-dead-offset'] ?? -1),
    by: h['x-dead-consumer'] ?? (h['x-dead-projection'] ? `projection ${h['x-dead-projection']}` : 'unknown'),
    reason: h['x-dead-error'] ?? '',
    at: record.timestamp,
  };
}

function parseId(id: string): { partition: number; offset: number } {
  const match = /^(\d+):(\d+)$/.exec(id);
  if (!match) throw new Error(`a dead letter is named partition:offset, not ${id}`);
  return { partition: Number(match[1]), offset: Number(match[2]) };
}

const deadTopic = (serdes: TopicSerdes) => topicName(deadLetterTopic, serdes.prefix);
const highs = (marks: Map<number, { low: number; high: number }>) => new Map([...marks].map(([p, { high }]) => [p, high]));

