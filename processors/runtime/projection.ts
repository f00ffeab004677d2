import type { PoolClient } from 'pg';
import type { SendCommand } from '../../schemas/records.js';
import { takenInTime, type RecordHeaders, type TopicSpec } from '../../topics/index.js';

/** Where a record sits in the log, for handlers that keep it (ordering, idempotence). */
export interface RecordMeta {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly timestamp: number;
  /** The record's headers, where the runner reads them from the log (its trace context). */
  readonly headers?: RecordHeaders;
}

/** A record of a batch as handlers see it; `value` null is a tombstone. */
export interface Applied<V> {
  readonly value: V | null;
  readonly meta: RecordMeta;
}

/** How a batch is applied. */
export interface ApplyScope {
  /**
   * A replay is rebuilding the projection: tables that `deriveAfterReplay` recomputes may be left
   * as they are, the swap recomputes them once.
   */
  readonly deferDerived: boolean;
}

export interface Handler<V> {
  readonly topic: TopicSpec<V>;
  /** Applies one record inside the batch's transaction; `value` null is a tombstone. */
  apply(tx: PoolClient, value: V | null, meta: RecordMeta, scope?: ApplyScope): Promise<void>;
  /**
   * Applies records of the topic in log order with a few statements, to the same result as `apply`
   * on each in turn. When it fails for bad data the runner applies the records one by one, to find
   * the one at fault.
   */
  applyAll?(tx: PoolClient, records: readonly Applied<V>[], scope?: ApplyScope): Promise<void>;
  /**
   * The topic is a compacted changelog that only each key's latest value matters of: a replay
   * leaves out, undecoded, the records of a batch that a later one with the same key supersedes.
   */
  readonly latestPerKey?: boolean;
}

/**
 * A Postgres projection of some topics. Its tables live in a schema of their own, named after
 * the projection, together with the offsets it has applied: replay builds a second schema and
 * swaps the two, offsets included.
 */
export interface Projection {
  readonly name: string;
  /** CREATE statements with unqualified names; they run with the projection's schema as search path. */
  readonly ddl: readonly string[];
  readonly handlers: readonly Handler<unknown>[];
  /**
   * Input topics whose records retention deletes but whose effect the projection also reads from
   * a compacted changelog among its handlers: a replay loses nothing when their first records are gone.
   */
  readonly changelogCovers?: readonly TopicSpec<unknown>[];
  /**
   * Recomputes, from the projection's other tables, those derived wholly from them, in one
   * set-based pass. A replay's handlers leave these tables be (`ApplyScope.deferDerived`) and the
   * swap runs this once, after the last replayed record: the same tables, without recomputing
   * each derived row after every batch that touches it.
   */
  readonly deriveAfterReplay?: (swap: ReplaySwap) => Promise<void>;
  /**
   * True when no row the projection writes is written from two partitions (it keeps no tables of
   * its own, or each row belongs to one key): live, the batches of several partitions are then
   * applied side by side. Left out, one at a time: two transactions writing the same row from two
   * partitions would make which write wins depend on timing.
   */
  readonly partitionsApart?: boolean;
}

/** Work of a replay's swap, in one transaction whose search path is the replay's schema. */
export type SwapWork = (tx: PoolClient) => Promise<void>;

/**
 * The transactions of a replay's swap, each committed before the next begins (the replay's schema
 * is nobody's until it is renamed, so a swap that fails half-way is dropped whole). Postgres runs
 * a statement on one core: work split into parts that touch different rows runs `together`.
 */
export interface ReplaySwap {
  step(work: SwapWork): Promise<void>;
  /** Each work on a connection of its own, side by side; resolves when all are committed. */
  together(works: readonly SwapWork[]): Promise<void>;
}

export function on<V>(topic: TopicSpec<V>, apply: Handler<V>['apply']): Handler<unknown> {
  return { topic, apply };
}

/** A handler that applies a batch's records together; a single record is a batch of one. */
export function onBatch<V>(topic: TopicSpec<V>, applyAll: NonNullable<Handler<V>['applyAll']>, options: { latestPerKey?: boolean } = {}): Handler<unknown> {
  const handler: Handler<V> = { topic, applyAll, apply: (tx, value, meta, scope) => applyAll(tx, [{ value, meta }], scope), ...options };
  return handler;
}

/** The values of records, tombstones left out. */
export function valuesOf<V>(records: readonly Applied<V>[]): V[] {
  return records.flatMap((record) => (record.value === null ? [] : [record.value]));
}

/** The send commands the log took before their deadline: the others were refused (see `takenInTime`). */
export function sendsTakenInTime(records: readonly Applied<SendCommand>[]): Applied<SendCommand>[] {
  return records.filter((record) => record.value === null || takenInTime(record.value, record.meta.timestamp));
}
