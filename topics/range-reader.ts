import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { TopicSpec } from './catalogue.js';
import type { ConsumedRecord } from './consumer.js';
import { readFromPositions } from './positioned-reader.js';
import type { TopicSerdes } from './serdes.js';

/** How long reading a range may take before the command gives up. */
const READ_TIMEOUT_MS = 30_000;

/**
 * The records of each partition of a topic from `from` up to (not including) `to`, in partition
 * and offset order: what an operator's command reads (dead letters, dead deliveries).
 */
export async function readRange<V>(
  deps: { readonly kafka: Kafka; readonly serdes: TopicSerdes },
  spec: Pick<TopicSpec<V>, 'name' | 'value'>,
  from: ReadonlyMap<number, number>,
  to: ReadonlyMap<number, number>,
): Promise<ConsumedRecord<V>[]> {
  const wanted = new Map([...from].filter(([p, offset]) => offset < (to.get(p) ?? 0)));
  if (wanted.size === 0) return [];
  const records: ConsumedRecord<V>[] = [];
  let reached!: () => void;
  const done = new Promise<void>((resolve) => (reached = resolve));
  const reader = await readFromPositions(
    deps.kafka,
    deps.serdes,
    { groupId: `${deps.serdes.prefix}range.${randomUUID().slice(0, 8)}`, topic: spec, from: wanted },
    (batch) => {
      records.push(...(batch.records as ConsumedRecord<V>[]).filter((r) => r.offset < (to.get(r.partition) ?? 0)));
      if ([...wanted.keys()].every((p) => lastSeen(records, p) >= to.get(p)! - 1)) reached();
    },
  );
  try {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${spec.name} could not be read in time`)), READ_TIMEOUT_MS);
    });
    await Promise.race([done, timeout]).finally(() => clearTimeout(timer));
    return records.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  } finally {
    await reader.stop();
  }
}

function lastSeen(records: readonly ConsumedRecord<unknown>[], partition: number): number {
  let last = -1;
  for (const r of records) if (r.partition === partition && r.offset > last) last = r.offset;
  return last;
}
