import { randomUUID } from 'node:crypto';
import type { PublicEvent } from '../../schemas/records.js';
import { readFromPositions, recordsOf, topicName, topics, watermarks, type ConsumedRecord, type Kafka, type TopicSerdes } from '../../topics/index.js';

/** Offsets per partition of `gw.events`: `from` inclusive, `to` exclusive. */
export interface LogRange {
  readonly from: ReadonlyMap<number, number>;
  readonly to: ReadonlyMap<number, number>;
}

/** Reads `range` of `gw.events`, handing each partition's records to `each`, until done or `signal` aborts. */
export type LogReader = (
  range: LogRange,
  each: (partition: number, records: readonly ConsumedRecord<PublicEvent>[]) => Promise<void>,
  signal: AbortSignal,
) => Promise<void>;

/**
 * Reads a range of `gw.events` straight from the log, for a client resuming further back than
 * the hub holds in memory: a reader of its own (a fresh consumer group, deleted afterwards) starts
 * at `from` and stops once every partition reached `to`. Records the log no longer holds
 * (retention) are skipped. `each` is awaited, so a slow client slows the read, not the memory.
 */
export async function readLogRange(
  deps: { kafka: Kafka; serdes: TopicSerdes },
  range: LogRange,
  each: (partition: number, records: readonly ConsumedRecord<PublicEvent>[]) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const held = await watermarks(deps.kafka, topicName(topics.events, deps.serdes.prefix));
  const from = new Map<number, number>();
  for (const [partition, start] of range.from) {
    const first = Math.max(start, held.get(partition)?.low ?? start);
    if (first < (range.to.get(partition) ?? 0)) from.set(partition, first);
  }
  if (from.size === 0 || signal.aborted) return;

  const unfinished = new Set(from.keys());
  let failure: Error | undefined;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  signal.addEventListener('abort', () => finish(), { once: true });
  const reader = await readFromPositions(
    deps.kafka,
    deps.serdes,
    { groupId: `${deps.serdes.prefix}streams.catch-up.${randomUUID()}`, topic: topics.events, from },
    async (batch) => {
      if (signal.aborted || !unfinished.has(batch.partition)) return;
      const end = range.to.get(batch.partition)!;
      try {
        await each(batch.partition, recordsOf(batch, topics.events).filter((record) => record.offset < end));
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        finish();
        return;
      }
      if (batch.records[batch.records.length - 1]!.offset + 1 >= end) {
        unfinished.delete(batch.partition);
        if (unfinished.size === 0) finish();
      }
    },
  );
  try {
    await finished;
  } finally {
    await reader.stop();
  }
  if (failure !== undefined) throw failure;
}
