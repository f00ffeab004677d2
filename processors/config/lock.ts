import type { Pool } from 'pg';
import { KeyedSerial } from '../../shared/serial.js';
import { withDeadline } from '../../shared/deadline.js';
import { endOffsets, topicName, topics, type Kafka } from '../../topics/index.js';
import type { Directory } from '../directory.js';
import { ConfigRefused } from './refused.js';

/** Longest wait for another process's change under the same lock. */
const LOCK_WAIT_MS = 20_000;
const LOG_DEADLINE_MS = 5_000;

/** What a lock guards (`webhooks` of a project, the `projects` of an account) and whose. */
export interface ConfigLock {
  readonly kind: string;
  readonly id: string;
}

/** What taking the lock needs: Postgres for the advisory lock, the cluster for `gw.config`'s end, and the directory. */
export interface ConfigLockDeps {
  readonly pool: Pool;
  readonly kafka: Kafka;
  /** The topic prefix of this install. */
  readonly prefix: string;
  readonly directory: Directory;
}

/** Changes under one lock wait their turn in the process first, so each waits on the lock with one pooled connection at most. */
const turns = new WeakMap<Directory, KeyedSerial>();

/**
 * Runs a change of `gw.config` alone, across every process: under a Postgres advisory
 * transaction lock named by `lock`, and only once this process's directory has applied all that
 * `gw.config` held when the lock was taken. A check made inside therefore sees every record
 * written before under the same lock, wherever it was written; `change` must write and wait for
 * its own write before returning, so the next holder sees it too. A lock held by another change
 * all along is refused as `service_unavailable`.
 */
export function changeConfigAlone<T>(deps: ConfigLockDeps, lock: ConfigLock, change: () => Promise<T>): Promise<T> {
  let serial = turns.get(deps.directory);
  if (serial === undefined) turns.set(deps.directory, (serial = new KeyedSerial()));
  return serial.run(`${lock.kind}:${lock.id}`, () => locked(deps, lock, change));
}

async function locked<T>(deps: ConfigLockDeps, lock: ConfigLock, change: () => Promise<T>): Promise<T> {
  const client = await deps.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`);
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [lock.kind, lock.id]);
    const ends = await withDeadline(endOffsets(deps.kafka, topicName(topics.config, deps.prefix)), LOG_DEADLINE_MS);
    await deps.directory.reached(ends);
    const result = await change();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    // 55P03: lock_not_available, another change under the lock held it all along.
    if ((error as { code?: unknown }).code === '55P03') throw new ConfigRefused('service_unavailable', undefined, { cause: error });
    throw error;
  } finally {
    client.release();
  }
}
