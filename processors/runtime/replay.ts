import type { Logger } from 'pino';
import type { ClickHouse } from '../../shared/clickhouse.js';
import { backlogFetch, deleteGroup, recordsHeld, topicName, watermarks, type PartitionShare } from '../../topics/index.js';
import { replayTable, tableGaps } from './clickhouse-replay.js';
import type { ClickHouseTable } from './clickhouse-table.js';
import { LogGapsError, logGaps, type LogGap, type ProjectionGaps, type ReplayResult } from './log-gaps.js';
import type { Pool, PoolClient } from 'pg';
import type { Projection, ReplaySwap, SwapWork } from './projection.js';
import { runProjection, type RunnerDeps } from './runner.js';
import { ensureProjectionSchema, projectionLockKey, quoteIdent, storedOffsets } from './store.js';

const inputTopics = (deps: Pick<RunnerDeps, 'serdes'>, projection: Projection) => projection.handlers.map((h) => topicName(h.topic, deps.serdes.prefix));

/** The gaps of a projection's inputs, less those a changelog among its handlers covers. */
export async function projectionGaps(deps: Pick<RunnerDeps, 'kafka' | 'serdes'>, projection: Projection): Promise<LogGap[]> {
  const covered = new Set((projection.changelogCovers ?? []).map((topic) => topicName(topic, deps.serdes.prefix)));
  return logGaps(deps.kafka, inputTopics(deps, projection).filter((topic) => !covered.has(topic)));
}

/** A replay's members: the projection, the schema they fill, and how many they are (`of`). */
export interface ReplayGroup {
  readonly projection: string;
  readonly schema: string;
  /** The base of the members' group ids: see `replayMember`. */
  readonly groupId: string;
  readonly of: number;
}

/**
 * Members of a replay besides the replaying process's own, run elsewhere (worker threads:
 * `stack/replay-members.ts`): the n-th (from 1) applies share n of the inputs' partitions
 * (`replayMember`); the replaying process applies share 0. Joining resolves once they run.
 */
export interface ReplayMembers {
  readonly count: number;
  join(group: ReplayGroup): Promise<JoinedMembers>;
}

export interface JoinedMembers {
  /** Stops them; resolves to the records they applied. */
  leave(): Promise<number>;
  /**
   * Rejects if one of them ends before it is told to leave (its thread died): no other member
   * applies its share, so the replay could never catch up, and fails at once instead.
   */
  readonly lost: Promise<never>;
}

/** Member `index` of a replay: the partitions it applies, in a consumer group of its own. */
export function replayMember(group: ReplayGroup, index: number): { groupId: string; share: PartitionShare } {
  return { groupId: `${group.groupId}.${index}`, share: { index, of: group.of } };
}

/**
 * Inputs holding fewer records than this are replayed by one member: starting the others' consumers
 * (a few hundred milliseconds) costs more than they save on a small backlog.
 */
export const MEMBERS_FROM_RECORDS = 20_000;

/** ClickHouse tables to rebuild with the Postgres projections, in the store they live in. */
export interface ReplayedTables {
  readonly clickhouse: ClickHouse;
  readonly tables: readonly ClickHouseTable[];
}

/**
 * Replays projections one after the other, then the ClickHouse tables. Every input is checked
 * first, so a refusal names every gap of every projection and table before anything is rebuilt.
 */
export async function replayAll(
  deps: RunnerDeps,
  projections: readonly Projection[],
  options: ReplayOptions & { onReplayed?: (result: ReplayResult) => void; clickhouse?: ReplayedTables } = {},
): Promise<ReplayResult[]> {
  const tables = options.clickhouse?.tables ?? [];
  const refused: ProjectionGaps[] = [];
  for (const projection of projections) {
    const gaps = await projectionGaps(deps, projection);
    if (gaps.length > 0) refused.push({ projection: projection.name, gaps });
  }
  for (const table of tables) {
    const gaps = await tableGaps(deps, table);
    if (gaps.length > 0) refused.push({ projection: table.name, gaps });
  }
  if (refused.length > 0 && options.allowGaps !== true) throw new LogGapsError(refused);
  const results: ReplayResult[] = [];
  const replayed = (result: ReplayResult) => {
    options.onReplayed?.(result);
    results.push(result);
  };
  for (const projection of projections) replayed(await replayProjection(deps, projection, options));
  for (const table of tables) replayed(await replayTable({ ...deps, clickhouse: options.clickhouse!.clickhouse }, table, options));
  return results;
}

export interface ReplayOptions {
  readonly deadlineMs?: number;
  readonly allowGaps?: boolean;
  /** More members to apply the backlog side by side, when the inputs hold `MEMBERS_FROM_RECORDS` or more. */
  readonly members?: ReplayMembers;
}

/**
 * Rebuilds a projection from offset zero into a fresh schema, then swaps it in. The swap holds
 * the projection's lock exclusively, so no live batch runs between the last replayed record and
 * the rename; the live runner then continues from the offsets that came with the new schema.
 * The rebuild reads with large fetches and lets handlers defer derived tables, which the
 * projection's `deriveAfterReplay` recomputes once under the lock, before the rename.
 */
export async function replayProjection(deps: RunnerDeps, projection: Projection, options: ReplayOptions = {}): Promise<ReplayResult> {
  const started = Date.now();
  const deadline = started + (options.deadlineMs ?? 30 * 60_000);
  const stamp = `${Date.now()}`;
  const schema = `${projection.name}__replay_${stamp}`;
  const logger = deps.logger.child({ projection: projection.name, replay: schema });
  const topics = inputTopics(deps, projection);
  const gaps = await projectionGaps(deps, projection);
  if (gaps.length > 0 && options.allowGaps !== true) throw new LogGapsError([{ projection: projection.name, gaps }]);
  if (gaps.length > 0) logger.warn({ gaps }, 'replaying without what the log no longer holds');
  const others = options.members && (await recordsHeld(deps.kafka, topics)) >= MEMBERS_FROM_RECORDS ? options.members : undefined;
  const group: ReplayGroup = { projection: projection.name, schema, groupId: `${deps.serdes.prefix}replay.${projection.name}.${stamp}`, of: 1 + (others?.count ?? 0) };
  const members = await joinReplay(deps, projection, group, others);
  let applied: ReplayResult['applied'];

  const lock = await deps.pool.connect();
  let swapStarted = Date.now();
  const caughtUp = () => Promise.race([waitUntilCaughtUp(deps, schema, topics, deadline, logger), members.lost]);
  try {
    await caughtUp();
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [projectionLockKey(projection)]);
    try {
      await caughtUp();
      applied = await members.stop();
      swapStarted = Date.now();
      const retired = `${projection.name}__retired_${stamp}`;
      if (projection.deriveAfterReplay) await projection.deriveAfterReplay(replaySwap(deps.pool, lock, schema));
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
    await members.stop().catch(() => undefined);
    await lock.query('ROLLBACK').catch(() => undefined);
    await deps.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`).catch(() => undefined);
    throw error;
  } finally {
    lock.release();
  }
  const swapEnded = Date.now();
  for (let index = 0; index < group.of; index++) {
    const { groupId } = replayMember(group, index);
    await deleteGroup(deps.kafka, groupId).catch((err: unknown) => logger.warn({ err, groupId }, 'could not delete the replay group'));
  }
  const records = await countApplied(deps, projection.name, topics, gaps);
  const result = { projection: projection.name, records, durationMs: Date.now() - started, swapMs: swapEnded - swapStarted, applied, gaps };
  logger.info(result, 'replay swapped in');
  return result;
}

/**
 * Starts a replay's members: the others, when there are any, and this process's own, side by side.
 * Stopping stops every member (one that fails to stop fails the replay) and tells what they applied.
 */
async function joinReplay(
  deps: RunnerDeps,
  projection: Projection,
  group: ReplayGroup,
  others: ReplayMembers | undefined,
): Promise<{ readonly lost: Promise<never>; stop(): Promise<{ here: number; elsewhere: number }> }> {
  await ensureProjectionSchema(deps.pool, projection, group.schema);
  const [joined, ran] = await Promise.allSettled([
    others?.join(group),
    runProjection(deps, projection, { schema: group.schema, ...replayMember(group, 0), lock: 'none', fetch: backlogFetch, replaying: true }),
  ]);
  const elsewhere = joined.status === 'fulfilled' ? joined.value : undefined;
  if (ran.status === 'rejected' || joined.status === 'rejected') {
    await Promise.allSettled([elsewhere?.leave(), ran.status === 'fulfilled' ? ran.value.stop() : undefined]);
    throw ran.status === 'rejected' ? ran.reason : (joined as PromiseRejectedResult).reason;
  }
  const running = ran.value;
  const lost = elsewhere?.lost ?? new Promise<never>(() => undefined);
  // Observed here: a member lost after the swap began is the leaving's failure, not an unhandled one.
  lost.catch(() => undefined);
  let stopped: Promise<{ here: number; elsewhere: number }> | undefined;
  return {
    lost,
    stop: () => (stopped ??= Promise.all([running.stop(), elsewhere?.leave() ?? 0]).then(([, applied]) => ({ here: running.applied(), elsewhere: applied }))),
  };
}

/** The swap of a replay into `schema`: its steps on the connection that holds the projection's lock, its parts on others of the pool. */
export function replaySwap(pool: Pool, lock: PoolClient, schema: string): ReplaySwap {
  const inSchema = async (client: PoolClient, work: SwapWork) => {
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  };
  return {
    step: (work) => inSchema(lock, work),
    async together(works) {
      const done = await Promise.allSettled(
        works.map(async (work) => {
          const client = await pool.connect();
          try {
            await inSchema(client, work);
          } finally {
            client.release();
          }
        }),
      );
      // Every part has ended before a failure is thrown: the replay then drops the schema they write.
      const failed = done.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

/**
 * Waits until the projection in `schema` has applied everything the log holds right now. A
 * partition whose records retention has deleted, all of them or the first ones, is caught up from
 * its first record held: the projection never sees the others.
 */
export async function waitUntilCaughtUp(
  deps: Pick<RunnerDeps, 'kafka' | 'pool'>,
  schema: string,
  topics: readonly string[],
  deadline: number,
  logger?: Logger,
): Promise<void> {
  const targets = await Promise.all(topics.map(async (topic) => [topic, await watermarks(deps.kafka, topic)] as const));
  for (let delay = 25; ; delay = Math.min(delay * 2, 100)) {
    let behind = 0;
    for (const [topic, held] of targets) {
      const stored = await storedOffsets(deps.pool, schema, topic);
      for (const [partition, { low, high }] of held) behind += Math.max(0, high - Math.max(low, stored.get(partition) ?? low));
    }
    if (behind === 0) return;
    if (Date.now() > deadline) throw new Error(`${schema} is still ${behind} records behind the log at the deadline`);
    logger?.debug({ behind }, 'catching up');
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Records the rebuilt projection applied: up to its stored offsets, from the first record held. */
async function countApplied(deps: RunnerDeps, schema: string, topics: readonly string[], gaps: readonly LogGap[]): Promise<number> {
  let total = 0;
  for (const topic of topics) {
    for (const [partition, next] of await storedOffsets(deps.pool, schema, topic)) {
      total += next - (gaps.find((g) => g.topic === topic && g.partition === partition)?.firstHeld ?? 0);
    }
  }
  return total;
}
