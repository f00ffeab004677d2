import type { Logger } from 'pino';
import { deleteGroup, endOffsets, topicName } from '../../topics/index.js';
import type { Projection } from './projection.js';
import { runProjection, type RunnerDeps } from './runner.js';
import { projectionLockKey, quoteIdent, storedOffsets } from './store.js';

export interface ReplayResult {
  readonly projection: string;
  readonly records: number;
  readonly durationMs: number;
}

/**
 * Rebuilds a projection from offset zero into a fresh schema, then swaps it in. The swap holds
 * the projection's lock exclusively, so no live batch runs between the last replayed record and
 * the rename; the live runner then continues from the offsets that came with the new schema.
 */
export async function replayProjection(deps: RunnerDeps, projection: Projection, options: { deadlineMs?: number } = {}): Promise<ReplayResult> {
  const started = Date.now();
  const deadline = started + (options.deadlineMs ?? 30 * 60_000);
  const stamp = `${Date.now()}`;
  const schema = `${projection.name}__replay_${stamp}`;
  const logger = deps.logger.child({ projection: projection.name, replay: schema });
  const topics = projection.handlers.map((h) => topicName(h.topic, deps.serdes.prefix));
  const running = await runProjection(deps, projection, { schema, groupId: `${deps.serdes.prefix}replay.${projection.name}.${stamp}`, lock: 'none' });

  const lock = await deps.pool.connect();
  try {
    await waitUntilCaughtUp(deps, schema, topics, deadline, logger);
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [projectionLockKey(projection)]);
    try {
      await waitUntilCaughtUp(deps, schema, topics, deadline, logger);
      await running.stop();
      const retired = `${projection.name}__retired_${stamp}`;
      await lock.query('BEGIN');
      await lock.query(`ALTER SCHEMA ${quoteIdent(projection.name)} RENAME TO ${quoteIdent(retired)}`).catch(async (error: unknown) => {
        // First build of a projection that never ran live: nothing to retire.
        if ((error as { code?: string }).code !== '3F000') throw error;
        await lock.query('ROLLBACK');
        await lock.query('BEGIN');
      });
      await lock.query(`ALTER SCHEMA ${quoteIdent(schema)} RENAME TO ${quoteIdent(projection.name)}`);
      await lock.query(`DROP SCHEMA IF EXISTS ${quoteIdent(retired)} CASCADE`);
      await lock.query('COMMIT');
    } finally {
      // An aborted swap leaves the transaction open: end it, or the unlock fails and the lock stays held.
      await lock.query('ROLLBACK').catch(() => undefined);
      await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [projectionLockKey(projection)]);
    }
  } catch (error) {
    await running.stop().catch(() => undefined);
    await lock.query('ROLLBACK').catch(() => undefined);
    await deps.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`).catch(() => undefined);
    throw error;
  } finally {
    lock.release();
  }
  await deleteGroup(deps.kafka, running.groupId).catch((err: unknown) => logger.warn({ err, groupId: running.groupId }, 'could not delete the replay group'));
  const records = await countApplied(deps, projection.name, topics);
  const result = { projection: projection.name, records, durationMs: Date.now() - started };
  logger.info(result, 'replay swapped in');
  return result;
}

/** Waits until the projection in `schema` has applied everything the log holds right now. */
export async function waitUntilCaughtUp(
  deps: Pick<RunnerDeps, 'kafka' | 'pool'>,
  schema: string,
  topics: readonly string[],
  deadline: number,
  logger?: Logger,
): Promise<void> {
  const targets = await Promise.all(topics.map(async (topic) => [topic, await endOffsets(deps.kafka, topic)] as const));
  for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
    let behind = 0;
    for (const [topic, ends] of targets) {
      const stored = await storedOffsets(deps.pool, schema, topic);
      for (const [partition, end] of ends) behind += Math.max(0, end - (stored.get(partition) ?? 0));
    }
    if (behind === 0) return;
    if (Date.now() > deadline) throw new Error(`${schema} is still ${behind} records behind the log at the deadline`);
    logger?.debug({ behind }, 'catching up');
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

async function countApplied(deps: RunnerDeps, schema: string, topics: readonly string[]): Promise<number> {
  let total = 0;
  for (const topic of topics) for (const next of (await storedOffsets(deps.pool, schema, topic)).values()) total += next;
  return total;
}
