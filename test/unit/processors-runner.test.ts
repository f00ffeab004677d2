import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Applied, Handler, Projection } from '../../processors/runtime/projection.js';
import { applyBatches, type AppliedBatches } from '../../processors/runtime/runner.js';
import { ensureProjectionSchema, storedOffsets } from '../../processors/runtime/store.js';
import { topicName, topics, UNKNOWN_ATTEMPTS, type TopicSpec } from '../../topics/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { MemoryBatch, MemoryConsumer, MemoryProducer, memoryRecord } from '../support/memory-topics.js';

const quiet = pino({ level: 'silent' });
const PREFIX = 't.';
const TOPIC = topicName(topics.contacts, PREFIX);

interface Note {
  readonly body: string;
}

/** Bad data Postgres refuses (a NUL byte): a permanent failure. */
const POISON = 'poison\u0000';
/** A body the handler fails on with an unknown error (a bug), every time. */
const BUG = 'bug';
/** A body the handler fails on with a lost connection, the first two times. */
const FLAKY = 'flaky';

/**
 * The projection runner on the real Postgres with its batches fed in memory: a batch applies in one
 * transaction with its offset; bad data splits it to find the records at fault, which alone go to
 * the dead letters, once each.
 */
describe('projection runner: batches, the split and the poison path', () => {
  let db: TestDatabase;
  let schema: string;
  let consumer: MemoryConsumer;
  let producer: MemoryProducer;
  let calls: { applyAll: number; apply: number; tries: Map<string, number> };

  /** Counts a try at a body, and fails the way that body fails. */
  function tryBody(body: string): void {
    const tries = (calls.tries.get(body) ?? 0) + 1;
    calls.tries.set(body, tries);
    if (body === BUG) throw new Error('a bug in the handler');
    if (body === FLAKY && tries <= 2) throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
  }

  const insert = `INSERT INTO notes (position, body) SELECT * FROM unnest($1::bigint[], $2::text[])`;
  const handler: Handler<Note> = {
    topic: topics.contacts as unknown as TopicSpec<Note>,
    async apply(tx, value, meta) {
      const body = value?.body ?? '';
      calls.apply++;
      tryBody(body);
      await tx.query(insert, [[meta.offset], [body]]);
    },
    async applyAll(tx, records: readonly Applied<Note>[]) {
      calls.applyAll++;
      for (const record of records) tryBody(record.value?.body ?? '');
      await tx.query(insert, [records.map((r) => r.meta.offset), records.map((r) => r.value?.body ?? '')]);
    },
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.dispose();
  });

  let run = 0;
  beforeEach(async () => {
    schema = `notes_${++run}`;
    const projection: Projection = {
      name: schema,
      ddl: ['CREATE TABLE IF NOT EXISTS notes (position bigint PRIMARY KEY, body text NOT NULL)'],
      handlers: [handler],
    };
    await ensureProjectionSchema(db.pool, projection, schema);
    consumer = new MemoryConsumer();
    producer = new MemoryProducer();
    calls = { applyAll: 0, apply: 0, tries: new Map() };
    await applyBatches({ pool: db.pool, producer, logger: quiet, prefix: PREFIX, backoff: () => 1 }, consumer, projection, { schema, lock: 'shared' });
  });

  const batchOf = (bodies: readonly (string | undefined)[], from = 0) =>
    new MemoryBatch(bodies.map((body, i) => memoryRecord(TOPIC, 0, from + i, body === undefined ? undefined : { body })), PREFIX);
  const applied = async () =>
    (await db.pool.query<{ position: string; body: string }>(`SELECT position, body FROM ${schema}.notes ORDER BY position`)).rows.map((r) => [
      Number(r.position),
      r.body,
    ]);
  const deadOffsets = () => producer.raw.map((r) => Number(r.headers['x-dead-offset']));

  it('applies a batch together, in one transaction with the offset after it', async () => {
    const batch = batchOf(['a', 'b', 'c']);
    await consumer.feed(batch);
    expect(calls.applyAll).toBe(1);
    expect(calls.apply).toBe(0);
    expect(await applied()).toEqual([[0, 'a'], [1, 'b'], [2, 'c']]);
    expect(await storedOffsets(db.pool, schema, TOPIC)).toEqual(new Map([[0, 3]]));
    expect(batch.resolved).toEqual([2]);
    expect(consumer.committed(TOPIC, 0)).toBe(3);
  });

  it('skips records below the stored offset when a batch comes again', async () => {
    await consumer.feed(batchOf(['a', 'b']));
    const again = batchOf(['a', 'b', 'c']);
    await consumer.feed(again);
    expect(await applied()).toEqual([[0, 'a'], [1, 'b'], [2, 'c']]);
    const skipped = batchOf(['a', 'b', 'c']);
    await consumer.feed(skipped);
    expect(skipped.resolved).toEqual([2]);
    expect(calls.applyAll).toBe(2);
  });

  it('splits a batch whose records together hit bad data, and dead-letters only the bad record', async () => {
    await consumer.feed(batchOf(['a', 'b', POISON, 'd', 'e']));
    expect(calls.applyAll).toBe(1);
    expect(await applied()).toEqual([[0, 'a'], [1, 'b'], [3, 'd'], [4, 'e']]);
    expect(deadOffsets()).toEqual([2]);
    expect(producer.raw[0]).toMatchObject({ topic: 't.gw.processors.dead', headers: { 'x-dead-projection': schema, 'x-dead-topic': TOPIC } });
    expect(consumer.committed(TOPIC, 0)).toBe(5);
  });

  it('dead-letters each of two poison records of a batch once', async () => {
    await consumer.feed(batchOf(['a', POISON, 'c', POISON, 'e']));
    expect(deadOffsets()).toEqual([1, 3]);
    expect(await applied()).toEqual([[0, 'a'], [2, 'c'], [4, 'e']]);
  });

  it('applies a batch with an undecodable record one by one and dead-letters that record', async () => {
    await consumer.feed(batchOf(['a', undefined, 'c']));
    expect(calls.applyAll).toBe(0);
    expect(deadOffsets()).toEqual([1]);
    expect(await applied()).toEqual([[0, 'a'], [2, 'c']]);
  });

  it('retries a transient failure until it passes, dead-lettering nothing', async () => {
    await consumer.feed(batchOf(['a', FLAKY]));
    expect(calls.tries.get(FLAKY)).toBe(3);
    expect(calls.apply).toBe(0);
    expect(deadOffsets()).toEqual([]);
    expect(await applied()).toEqual([[0, 'a'], [1, FLAKY]]);
  });

  it(`gives up on a record failing for an unknown reason after ${UNKNOWN_ATTEMPTS} tries, and dead-letters it`, async () => {
    await consumer.feed(batchOf(['a', BUG, 'c']));
    // The batch together spends the budget, then gives up on its next try; one by one finds the record at fault.
    expect(calls.applyAll).toBe(UNKNOWN_ATTEMPTS + 1);
    expect(calls.tries.get(BUG)).toBe(UNKNOWN_ATTEMPTS + 2);
    expect(deadOffsets()).toEqual([1]);
    expect(producer.raw[0]!.headers['x-dead-error']).toMatch(new RegExp(`^gave up after ${UNKNOWN_ATTEMPTS} tries: a bug`));
    expect(await applied()).toEqual([[0, 'a'], [2, 'c']]);
  });
});

/**
 * Live, the batches of several partitions that one fetch brings are applied in one transaction
 * with their offsets, and the group offsets are committed together, at most once per interval.
 */
describe('projection runner: batches of one fetch together', () => {
  let db: TestDatabase;
  let schema: string;
  let consumer: MemoryConsumer;
  let producer: MemoryProducer;
  let applying: AppliedBatches;

  const handler: Handler<Note> = {
    topic: topics.contacts as unknown as TopicSpec<Note>,
    async apply(tx, value, meta) {
      await tx.query(`INSERT INTO notes (partition, position, body, txid) VALUES ($1, $2, $3, txid_current())`, [meta.partition, meta.offset, value?.body ?? '']);
    },
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.dispose();
  });

  let run = 0;
  beforeEach(async () => {
    schema = `together_${++run}`;
    const projection: Projection = {
      name: schema,
      ddl: ['CREATE TABLE IF NOT EXISTS notes (partition int, position bigint, body text NOT NULL, txid bigint NOT NULL, PRIMARY KEY (partition, position))'],
      handlers: [handler],
    };
    await ensureProjectionSchema(db.pool, projection, schema);
    consumer = new MemoryConsumer();
    producer = new MemoryProducer();
    applying = await applyBatches({ pool: db.pool, producer, logger: quiet, prefix: PREFIX, backoff: () => 1, commitEveryMs: 60_000 }, consumer, projection, {
      schema,
      lock: 'shared',
      together: true,
    });
  });

  const batchOf = (partition: number, bodies: readonly (string | undefined)[], from = 0) =>
    new MemoryBatch(bodies.map((body, i) => memoryRecord(TOPIC, partition, from + i, body === undefined ? undefined : { body })), PREFIX);
  const rows = async () =>
    (await db.pool.query<{ partition: number; position: string; body: string; txid: string }>(`SELECT * FROM ${schema}.notes ORDER BY partition, position`)).rows;
  /** The batches of one fetch: handed over in the same turn, as kafkajs' workers do. */
  const fetched = (...batches: MemoryBatch[]) => Promise.all(batches.map((batch) => consumer.feed(batch)));

  it('applies the batches of several partitions in one transaction, their offsets with them', async () => {
    const [zero, one, two] = [batchOf(0, ['a', 'b']), batchOf(1, ['c']), batchOf(2, ['d', 'e'], 7)];
    await fetched(zero, one, two);
    const applied = await rows();
    expect(applied.map((r) => [r.partition, Number(r.position), r.body])).toEqual([[0, 0, 'a'], [0, 1, 'b'], [1, 0, 'c'], [2, 7, 'd'], [2, 8, 'e']]);
    expect(new Set(applied.map((r) => r.txid)).size).toBe(1);
    expect(await storedOffsets(db.pool, schema, TOPIC)).toEqual(new Map([[0, 2], [1, 1], [2, 9]]));
    expect([zero.resolved, one.resolved, two.resolved]).toEqual([[1], [0], [8]]);
    expect(applying.applied).toBe(5);
    // The first commit goes at once, with every partition in it.
    expect(consumer.commits).toEqual([
      { topic: TOPIC, partition: 0, next: 2 },
      { topic: TOPIC, partition: 1, next: 1 },
      { topic: TOPIC, partition: 2, next: 9 },
    ]);
  });

  it('applies one by one when a batch holds a record that cannot be applied, dead-lettering only it', async () => {
    await fetched(batchOf(0, ['a', undefined, 'c']), batchOf(1, ['d']));
    const applied = await rows();
    expect(applied.map((r) => [r.partition, Number(r.position)])).toEqual([[0, 0], [0, 2], [1, 0]]);
    expect(new Set(applied.map((r) => r.txid)).size).toBe(2);
    expect(producer.raw.map((r) => [r.headers['x-dead-partition'], r.headers['x-dead-offset']])).toEqual([['0', '1']]);
    expect(await storedOffsets(db.pool, schema, TOPIC)).toEqual(new Map([[0, 3], [1, 1]]));
  });

  it('skips what a partition applied already and leaves its stored offset ahead', async () => {
    await fetched(batchOf(0, ['a', 'b', 'c']));
    const again = batchOf(0, ['a', 'b']);
    await fetched(again, batchOf(1, ['d']));
    expect((await rows()).map((r) => [r.partition, Number(r.position)])).toEqual([[0, 0], [0, 1], [0, 2], [1, 0]]);
    expect(again.resolved).toEqual([1]);
    expect(await storedOffsets(db.pool, schema, TOPIC)).toEqual(new Map([[0, 3], [1, 1]]));
  });

  it('commits the group offsets once per interval, and what waits when the member leaves', async () => {
    await fetched(batchOf(0, ['a']));
    await fetched(batchOf(0, ['b'], 1), batchOf(1, ['c']));
    expect(consumer.commits).toEqual([{ topic: TOPIC, partition: 0, next: 1 }]);
    await applying.commitPending();
    expect(consumer.commits.slice(1)).toEqual([
      { topic: TOPIC, partition: 0, next: 2 },
      { topic: TOPIC, partition: 1, next: 1 },
    ]);
    await fetched(batchOf(1, ['d'], 1));
    expect(consumer.committed(TOPIC, 1)).toBe(2);
  });
});
