import type { PoolClient } from 'pg';
import type { TopicSpec } from '../../topics/index.js';

/** Where a record sits in the log, for handlers that keep it (ordering, idempotence). */
export interface RecordMeta {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly timestamp: number;
}

export interface Handler<V> {
  readonly topic: TopicSpec<V>;
  /** Applies one record inside the batch's transaction; `value` null is a tombstone. */
  apply(tx: PoolClient, value: V | null, meta: RecordMeta): Promise<void>;
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
}

export function on<V>(topic: TopicSpec<V>, apply: Handler<V>['apply']): Handler<unknown> {
  return { topic, apply };
}
