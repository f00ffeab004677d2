import type { Pool, PoolClient, QueryResult } from 'pg';
import type { Logger } from 'pino';
import { backoffMs } from '../../shared/backoff.js';
import {
  createConsumer,
  gaveUp,
  GatewayFailure,
  groupCommits,
  liveFetchApart,
  liveFetchGathered,
  sendToDeadLetters,
  sleepWithHeartbeat,
  UNKNOWN_ATTEMPTS,
  topicName,
  type ConsumedBatch,
  type ConsumedRecord,
  type FetchSettings,
  type GroupCommits,
  type GroupPosition,
  type PartitionShare,
  type Kafka,
  type Producer,
  type TopicConsumer,
  type TopicSerdes,
} from '../../topics/index.js';
import type { Applied, ApplyScope, Handler, Projection } from './projection.js';
import { gathering } from './gathering.js';
import { ensureProjectionSchema, projectionLockKey, quoteIdent } from './store.js';

export interface RunnerDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly pool: Pool;
  readonly producer: Producer;
  readonly logger: Logger;
}

export interface RunOptions {
  /** Postgres schema to write into; the projection's name unless replaying. */
  readonly schema?: string;
  readonly groupId?: string;
  /** Live runs take the projection's lock in shared mode so a replay can swap schemas between batches. */
  readonly lock?: 'shared' | 'none';
  /** Fetch sizes of the consumer: a replay reads its backlog with `backlogFetch`. */
  readonly fetch?: FetchSettings;
  /** A replay's run: handlers leave derived tables to `deriveAfterReplay`, commits need not wait for the disk. */
  readonly replaying?: boolean;
  /** Only this share of the partitions, for one of a replay's members. */
  readonly share?: PartitionShare;
}

export interface RunningProjection {
  readonly schema: string;
  readonly groupId: string;
  /** Records (offsets) this member has applied and committed since it started. */
  applied(): number;
  stop(): Promise<void>;
}

/**
 * Runs a projection as a consumer-group member. Each batch of a partition is applied in one
 * Postgres transaction together with the offset after it, so a crash at any point leaves the
 * projection at a batch boundary; on restart, records below the stored offset are skipped.
 */
export async function runProjection(deps: RunnerDeps, projection: Projection, options: RunOptions = {}): Promise<RunningProjection> {
  const schema = options.schema ?? projection.name;
  const groupId = options.groupId ?? `${deps.serdes.prefix}processor.${projection.name}`;
  const logger = deps.logger.child({ projection: projection.name, schema });
  await ensureProjectionSchema(deps.pool, projection, schema);

  const replaying = options.replaying ?? false;
  // Live, a projection whose partitions are not apart applies the batches of one fetch in one transaction.
  const together = !replaying && !projection.partitionsApart && options.fetch === undefined;
  const consumer = await createConsumer(deps.kafka, deps.serdes, {
    groupId,
    topics: projection.handlers.map((h) => h.topic),
    fromBeginning: true,
    // The gathered fetch hands out many partitions at once: only `together` applies them one transaction at a time.
    fetch: options.fetch ?? (together ? liveFetchGathered : projection.partitionsApart ? liveFetchApart : undefined),
    latestPerKey: options.replaying ? projection.handlers.filter((h) => h.latestPerKey).map((h) => h.topic) : [],
    share: options.share,
  });
  const { pool, producer } = deps;
  const applying = await applyBatches({ pool, producer, logger, prefix: deps.serdes.prefix }, consumer, projection, {
    schema,
    lock: options.lock ?? 'shared',
    replaying,
    together,
  });
  logger.info({ groupId }, 'projection running');
  return {
    schema,
    groupId,
    applied: () => applying.applied,
    async stop() {
      await applying.commitPending();
      await consumer.stop();
    },
  };
}

export interface BatchDeps {
  readonly pool: Pool;
  readonly producer: Producer;
  readonly logger: Logger;
  readonly prefix: string;
  /** The wait before retrying a failed batch; `backoffMs` unless a test needs it shorter. */
  readonly backoff?: (attempt: number) => number;
  /** The least time between two group offset commits (`groupCommits`); a second unless set. */
  readonly commitEveryMs?: number;
}

/** How often a projection commits its group offsets: they serve lag and restarts, Postgres keeps the truth. */
const COMMIT_EVERY_MS = 1_000;

export interface AppliedBatches {
  /** Records (offsets) applied and committed so far. */
  readonly applied: number;
  /** Commits the group offsets not yet committed, and later ones at once: the member is leaving its group. */
  commitPending(): Promise<void>;
}

/**
 * Applies what `consumer` fetches to the projection's schema, which exists already: the loop of
 * `runProjection`. Resolves once running, to the count of records it has applied so far.
 */
export async function applyBatches(
  deps: BatchDeps,
  consumer: TopicConsumer,
  projection: Projection,
  options: {
    readonly schema: string;
    readonly lock: 'shared' | 'none';
    readonly replaying?: boolean;
    /** Batches of several partitions that come together are applied in one transaction (`processTogether`). */
    readonly together?: boolean;
  },
): Promise<AppliedBatches> {
  const commits = groupCommits((positions) => consumer.commitAll(positions), {
    everyMs: deps.commitEveryMs ?? COMMIT_EVERY_MS,
    logger: deps.logger,
    failed: 'group offset commit failed; Postgres keeps the truth',
  });
  const context: BatchContext = {
    ...deps,
    schema: options.schema,
    lock: options.lock,
    replaying: options.replaying ?? false,
    scope: { deferDerived: options.replaying ?? false },
    backoff: deps.backoff ?? backoffMs,
    projection,
    handlers: new Map(projection.handlers.map((h) => [topicName(h.topic, deps.prefix), h])),
    consumer,
    soughtTo: new Map(),
    counted: { applied: 0 },
    commits,
  };
  const gather = options.together ? gathering((batches: readonly ConsumedBatch[]) => processTogether(context, batches)) : undefined;
  await consumer.run((batch) => (gather ? gather(batch) : processBatch(context, batch)));
  return {
    get applied() {
      return context.counted.applied;
    },
    commitPending: () => commits.leaving(),
  };
}

interface BatchContext extends Required<Omit<BatchDeps, 'commitEveryMs'>> {
  readonly projection: Projection;
  readonly schema: string;
  readonly lock: 'shared' | 'none';
  readonly replaying: boolean;
  readonly scope: ApplyScope;
  readonly handlers: ReadonlyMap<string, Handler<unknown>>;
  readonly consumer: TopicConsumer;
  /** Partitions we moved back to their stored offset, and where to: see `applyOnce`. */
  readonly soughtTo: Map<string, number>;
  readonly counted: { applied: number };
  readonly commits: GroupCommits;
}

type Attempt =
  | { readonly kind: 'committed'; readonly nextOffset: number; readonly applied: number }
  | { readonly kind: 'skipped' }
  | { readonly kind: 'sought'; readonly offset: number }
  | { readonly kind: 'poisoned'; readonly offset: number; readonly failure: GatewayFailure }
  /** Applying the records together hit bad data: apply them one by one to find which. */
  | { readonly kind: 'split' };

/**
 * Applies a batch until it commits. Transient failures are retried for as long as they last; once
 * unknown failures have come back `UNKNOWN_ATTEMPTS` times, the records whose handler still fails
 * with one are dead-lettered like records of bad data.
 */
async function processBatch(ctx: BatchContext, batch: ConsumedBatch): Promise<void> {
  if (batch.records.length === 0) return;
  const poisoned = new Map<number, GatewayFailure>();
  let oneByOne = false;
  for (let failures = 0, unknown = 0; batch.isRunning(); ) {
    let attempt: Attempt;
    try {
      attempt = await applyOnce(ctx, batch, poisoned, oneByOne, unknown >= UNKNOWN_ATTEMPTS);
    } catch (error) {
      const failure = GatewayFailure.from(error);
      if (failure.kind !== 'transient') unknown += 1;
      failures += 1;
      const delay = ctx.backoff(failures);
      ctx.logger.warn({ err: failure, kind: failure.kind, attempt: failures, delayMs: delay }, 'batch failed; retrying');
      await sleepWithHeartbeat(batch, delay);
      continue;
    }
    switch (attempt.kind) {
      case 'poisoned':
        poisoned.set(attempt.offset, attempt.failure);
        continue;
      case 'split':
        oneByOne = true;
        continue;
      case 'sought':
        ctx.consumer.seek(batch.topic, batch.partition, attempt.offset);
        return;
      case 'skipped':
        batch.resolve(lastOffset(batch));
        return;
      case 'committed':
        ctx.counted.applied += attempt.applied;
        batch.resolve(attempt.nextOffset - 1);
        await ctx.commits.add([{ topic: batch.topic, partition: batch.partition, nextOffset: attempt.nextOffset }]);
        return;
    }
  }
}

/**
 * Applies the batches of several partitions that came in one fetch in one transaction, their
 * offsets with them: the round trips of one batch for all. Anything but the plain case (a batch
 * before or after its stored offset, a record undecodable or refused, any failure) rolls it back,
 * and the batches are applied one by one, which sorts out each as alone.
 */
async function processTogether(ctx: BatchContext, batches: readonly ConsumedBatch[]): Promise<void> {
  const running = batches.filter((batch) => batch.records.length > 0 && batch.isRunning());
  if (running.length > 1 && (await applyTogether(ctx, running))) return;
  for (const batch of running) await processBatch(ctx, batch);
}

/** One try at batches together; false when they must be applied one by one. */
async function applyTogether(ctx: BatchContext, batches: readonly ConsumedBatch[]): Promise<boolean> {
  const done: { batch: ConsumedBatch; nextOffset: number; applied: number }[] = [];
  const client = await ctx.pool.connect();
  try {
    const stored = await beginBatches(ctx, client, batches);
    for (const batch of batches) {
      const from = stored.get(positionKey(batch));
      if (from !== undefined && from < batch.firstOffset) throw new Error('a batch after its stored offset');
      const pending = decodedRecords(batch.records.filter((record) => from === undefined || record.offset >= from));
      const handler = ctx.handlers.get(batch.topic);
      if (!pending || !handler) throw new Error('a record that cannot be applied');
      const nextOffset = lastOffset(batch) + 1;
      // Every record applied already: the stored offset stays where it is, ahead.
      if (pending.length === 0) {
        done.push({ batch, nextOffset, applied: 0 });
        continue;
      }
      if (handler.applyAll) await handler.applyAll(client, pending, ctx.scope);
      else for (const record of pending) await handler.apply(client, record.value, record.meta, ctx.scope);
      done.push({ batch, nextOffset, applied: nextOffset - Math.max(batch.firstOffset, from ?? batch.firstOffset) });
    }
    const positions = done.filter((d) => d.applied > 0).map(({ batch, nextOffset }) => ({ topic: batch.topic, partition: batch.partition, nextOffset }));
    await storeOffsetsAndCommit(client, positions);
    for (const { batch, nextOffset, applied } of done) {
      ctx.counted.applied += applied;
      batch.resolve(nextOffset - 1);
    }
    await ctx.commits.add(positions);
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    ctx.logger.debug({ err: error, batches: batches.length }, 'batches not applied together; applying them one by one');
    return false;
  } finally {
    client.release();
  }
}

/** One try at a batch: a transaction that applies every record not yet applied and stores the offset. */
async function applyOnce(
  ctx: BatchContext,
  batch: ConsumedBatch,
  poisoned: ReadonlyMap<number, GatewayFailure>,
  oneByOne: boolean,
  givingUp: boolean,
): Promise<Attempt> {
  const client = await ctx.pool.connect();
  try {
    const partitionKey = positionKey(batch);
    const stored = (await beginBatches(ctx, client, [batch])).get(partitionKey);
    const first = batch.firstOffset;
    if (stored !== undefined && stored < first && ctx.soughtTo.get(partitionKey) !== stored) {
      // The consumer is ahead of what was committed here (a replay swapped in an older position):
      // go back once. If the log no longer holds those records, the second batch is accepted.
      ctx.soughtTo.set(partitionKey, stored);
      await client.query('ROLLBACK');
      return { kind: 'sought', offset: stored };
    }
    if (stored !== undefined && stored < first) {
      ctx.logger.warn({ topic: batch.topic, partition: batch.partition, from: stored, to: first }, 'records no longer in the log');
    }
    ctx.soughtTo.delete(partitionKey);
    const pending = batch.records.filter((record) => stored === undefined || record.offset >= stored);
    if (pending.length === 0) {
      await client.query('ROLLBACK');
      return { kind: 'skipped' };
    }
    const handler = ctx.handlers.get(batch.topic);
    const together = oneByOne ? undefined : decodedRecords(pending);
    if (handler?.applyAll && together) {
      if (await failureOf(() => handler.applyAll!(client, together, ctx.scope), givingUp)) {
        await client.query('ROLLBACK');
        return { kind: 'split' };
      }
    } else {
      for (const record of pending) {
        const failure = poisoned.get(record.offset) ?? (await applyRecord(ctx, client, record, givingUp));
        if (failure && !poisoned.has(record.offset)) {
          await client.query('ROLLBACK');
          return { kind: 'poisoned', offset: record.offset, failure };
        }
      }
      // Only once every other record applied: a pass that finds another poison would send these again.
      for (const record of pending) {
        const failure = poisoned.get(record.offset);
        if (failure) await deadLetter(ctx, record, failure);
      }
    }
    const nextOffset = lastOffset(batch) + 1;
    await storeOffsetsAndCommit(client, [{ topic: batch.topic, partition: batch.partition, nextOffset }]);
    // Every offset from where this member started in the batch, those a latest-per-key read left out included.
    return { kind: 'committed', nextOffset, applied: nextOffset - Math.max(first, stored ?? first) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Applies one record; a non-retryable failure is returned (the record will be dead-lettered), others thrown. */
async function applyRecord(
  ctx: BatchContext,
  client: PoolClient,
  record: ConsumedRecord<unknown>,
  givingUp: boolean,
): Promise<GatewayFailure | undefined> {
  const handler = ctx.handlers.get(record.topic);
  if (!handler) return GatewayFailure.nonRetryable(`no handler for topic ${record.topic}`);
  if (!record.decoded.ok) return GatewayFailure.nonRetryable(record.decoded.error.message, record.decoded.error);
  const { value } = record.decoded;
  return failureOf(() => handler.apply(client, value, record, ctx.scope), givingUp);
}

/** The records as handlers take them; undefined when one of them could not be decoded. */
function decodedRecords(records: readonly ConsumedRecord<unknown>[]): Applied<unknown>[] | undefined {
  const applied: Applied<unknown>[] = [];
  for (const record of records) {
    if (!record.decoded.ok) return undefined;
    applied.push({ value: record.decoded.value, meta: record });
  }
  return applied;
}

/** Runs a handler; a permanent failure is returned (an unknown one too once `givingUp`), others thrown. */
async function failureOf(apply: () => Promise<void>, givingUp: boolean): Promise<GatewayFailure | undefined> {
  try {
    await apply();
    return undefined;
  } catch (error) {
    const failure = GatewayFailure.from(error);
    if (failure.kind === 'permanent') return failure;
    if (failure.kind === 'unknown' && givingUp) return gaveUp(failure, UNKNOWN_ATTEMPTS);
    throw failure;
  }
}

/**
 * Opens the transaction of some batches and locks the stored offsets of their partitions, answering
 * them by `positionKey`. One round trip: the statements go together, their few values written as
 * literals (a batch's fixed cost is its round trips, and a live projection applies many small batches).
 */
async function beginBatches(ctx: BatchContext, client: PoolClient, batches: readonly ConsumedBatch[]): Promise<Map<string, number>> {
  const partitions = batches.map((batch) => `(${client.escapeLiteral(batch.topic)}, ${batch.partition})`).join(', ');
  const statements = [
    'BEGIN',
    ...(ctx.lock === 'shared' ? [`SELECT pg_advisory_xact_lock_shared(hashtext(${client.escapeLiteral(projectionLockKey(ctx.projection))}))`] : []),
    `SET LOCAL search_path TO ${quoteIdent(ctx.schema)}`,
    // A replay's schema is not read until the swap, which commits synchronously after it.
    ...(ctx.replaying ? ['SET LOCAL synchronous_commit TO off'] : []),
    `SELECT topic, partition, next_offset FROM _offsets WHERE (topic, partition) IN (${partitions}) FOR UPDATE`,
  ];
  const results = (await client.query(statements.join(';\n'))) as unknown as QueryResult<{ topic: string; partition: number; next_offset: string }>[];
  return new Map(results[results.length - 1]!.rows.map((row) => [positionKey(row), Number(row.next_offset)]));
}

/** Stores where each partition is applied to, and commits: one round trip. */
async function storeOffsetsAndCommit(client: PoolClient, positions: readonly GroupPosition[]): Promise<void> {
  if (positions.length === 0) {
    await client.query('COMMIT');
    return;
  }
  const rows = positions.map((p) => `(${client.escapeLiteral(p.topic)}, ${p.partition}, ${p.nextOffset})`).join(', ');
  await client.query(
    `INSERT INTO _offsets (topic, partition, next_offset) VALUES ${rows}
     ON CONFLICT (topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now();
     COMMIT`,
  );
}

const positionKey = (at: { readonly topic: string; readonly partition: number }) => `${at.topic}:${at.partition}`;

async function deadLetter(ctx: BatchContext, record: ConsumedRecord<unknown>, failure: GatewayFailure): Promise<void> {
  ctx.logger.error({ err: failure, topic: record.topic, partition: record.partition, offset: record.offset }, 'record dead-lettered');
  await sendToDeadLetters(ctx.producer, ctx.prefix, record, { 'x-dead-projection': ctx.projection.name }, failure.message);
}

function lastOffset(batch: ConsumedBatch): number {
  return batch.records[batch.records.length - 1]?.offset ?? -1;
}
