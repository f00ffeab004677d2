import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createConsumer, deleteGroup, endOffsets, recordsOf, topicName, type Kafka, type TopicConsumer, type TopicSerdes, type TopicSpec } from '../../topics/index.js';
import { DeadlineExceeded } from '../../shared/deadline.js';

const SEEN_KEPT = 10_000;

/**
 * An in-memory view every process rebuilds from a compacted topic: it applies each record by key,
 * remembers which writes it has seen (so a writer can wait for its own) and how far it has read
 * each partition (so a reader can wait until everything written before a moment is in).
 */
export abstract class FollowedView<V> {
  private readonly waiters = new Set<() => void>();
  /** Ids of the writes applied lately, so a writer can wait for its own (bounded). */
  private readonly seen = new Set<string>();
  /** Per partition, the offset after the last record applied. */
  private readonly offsets = new Map<number, number>();

  /** Applies one record; `null` (a tombstone) removes the entity with that key. */
  protected abstract applyValue(key: string, value: V | null): void;
  /** The id of a write, as `applied` is asked for it. */
  protected abstract writeId(value: V): string;

  private readonly listeners = new Set<(key: string, value: V | null) => void>();

  /** Calls `listener` after each record applied from now on; returns the unsubscribe. */
  subscribe(listener: (key: string, value: V | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Applies one record of the topic; a null value (tombstone) removes the entity with that key. */
  apply(key: string, value: V | null): void {
    this.applyValue(key, value);
    for (const listener of this.listeners) listener(key, value);
    this.seen.add(value === null ? `deleted:${key}` : this.writeId(value));
    if (this.seen.size > SEEN_KEPT) this.seen.delete(this.seen.values().next().value!);
  }

  /** Resolves once this process has applied the given write (`null` for a tombstone) of a key. */
  async applied(key: string, writeId: string | null, timeoutMs?: number): Promise<void> {
    const id = writeId ?? `deleted:${key}`;
    await this.until(() => this.seen.has(id), timeoutMs);
  }

  /** Notes that records of a partition are applied up to `nextOffset` (exclusive). */
  advance(partition: number, nextOffset: number): void {
    this.offsets.set(partition, nextOffset);
  }

  /** Resolves once every partition is applied up to the given end offsets: everything written before they were read is then in. */
  async reached(ends: ReadonlyMap<number, number>, timeoutMs?: number): Promise<void> {
    await this.until(() => [...ends].every(([partition, end]) => (this.offsets.get(partition) ?? 0) >= end), timeoutMs);
  }

  /** Wakes those waiting in `until`: called after each applied batch. */
  settled(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves once `ready()` holds; `DeadlineExceeded` after `timeoutMs`. */
  async until(ready: () => boolean, timeoutMs = 5_000): Promise<void> {
    if (ready()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new DeadlineExceeded(timeoutMs));
      }, timeoutMs);
      const check = () => {
        if (!ready()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }
}

export interface RunningView<T> {
  readonly view: T;
  stop(): Promise<void>;
}

/**
 * Reads `spec` from the beginning into `view` (its own consumer group, nothing committed) and
 * resolves once everything written before the start is applied; then keeps following the topic.
 */
export async function followView<V, T extends FollowedView<V>>(
  deps: { kafka: Kafka; serdes: TopicSerdes; logger: Logger },
  spec: TopicSpec<V>,
  view: T,
  name: string,
): Promise<RunningView<T>> {
  const topic = topicName(spec, deps.serdes.prefix);
  const groupId = `${deps.serdes.prefix}${name}.${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`;
  const targets = await endOffsets(deps.kafka, topic);

  const consumer: TopicConsumer = await createConsumer(deps.kafka, deps.serdes, { groupId, topics: [spec], fromBeginning: true });
  await consumer.run(async (batch) => {
    for (const record of recordsOf(batch, spec)) {
      if (!record.decoded.ok) {
        deps.logger.error({ err: record.decoded.error, offset: record.offset, view: name }, 'undecodable record skipped');
      } else if (record.key !== null) {
        // A view every process rebuilds from the log: a record it cannot take is skipped, never retried.
        try {
          view.apply(record.key, record.decoded.value);
        } catch (err) {
          deps.logger.error({ err, offset: record.offset, partition: record.partition, view: name }, 'record not applied; skipped');
        }
      }
      view.advance(batch.partition, record.offset + 1);
    }
    view.settled();
    batch.resolve(batch.records[batch.records.length - 1]!.offset);
  });
  // The last offsets of a compacted partition may have been cleaned away: after a while, start
  // with what was read (the consumer goes on following the topic).
  await view.reached(targets, 15_000).catch(() => deps.logger.warn({ view: name }, 'topic not read to its end at start; following it'));
  return {
    view,
    async stop() {
      await consumer.stop();
      await deleteGroup(deps.kafka, groupId).catch(() => undefined);
    },
  };
}
