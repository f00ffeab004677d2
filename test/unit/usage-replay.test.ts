import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Handler, Projection } from '../../processors/runtime/projection.js';
import { ensureProjectionSchema, quoteIdent } from '../../processors/runtime/store.js';
import { usageProjection } from '../../processors/usage/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, SendCommand, UsageRecord } from '../../schemas/records.js';
import { topics, type TopicSpec } from '../../topics/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { MemoryProducer } from '../support/memory-topics.js';

const ACCOUNT = asAccountId('acc_usage_replay');
const T0 = Date.UTC(2026, 10, 2, 12);

const send = (n: number): SendCommand => ({
  event_id: asEventId(`cmd_${n}`), occurred_at: T0 + n, account_id: ACCOUNT, project_id: asProjectId('prj_usage_replay'), instance_id: asInstanceId('inst_usage_replay'),
  message_id: asMessageId(`msg_${n}`), client_reference: null, to: '5511911113001@s.whatsapp.net', origin: 'api', campaign_id: null, idempotency_key_hash: null,
  expires_at: null, quoted_message_id: null, mentions: [], content: { kind: 'text', body: `hello ${n}` },
});

const plan = (name: string): ConfigRecord => ({
  event_id: asEventId(`cfg_${name}`), occurred_at: T0, account_id: ACCOUNT, project_id: null, instance_id: null, entity_id: ACCOUNT,
  entity: { kind: 'account', name: 'Usage replay', email: 'owner@usage.test', locale: 'en', plan: name, country: null },
});

/**
 * Which thresholds fire depends on the plan each send was counted against, so on how the live run
 * interleaved `gw.config` with the sends. A replay reads them in another order: it fires none of its
 * own, and takes those the live run fired from their `threshold_reached` records on `gw.usage`.
 */
describe('usage thresholds in a replay', () => {
  let db: TestDatabase;
  const producer = new MemoryProducer();
  const live = usageProjection(producer, 'live');
  const replay = usageProjection(new MemoryProducer(), 'replay');

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.dispose();
  });

  async function apply<V>(projection: Projection, schema: string, topic: TopicSpec<V>, values: readonly V[]): Promise<void> {
    await ensureProjectionSchema(db.pool, projection, schema);
    const handler = projection.handlers.find((h) => h.topic === topic)! as Handler<V>;
    const tx = await db.pool.connect();
    try {
      await tx.query('BEGIN');
      await tx.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
      const meta = (offset: number) => ({ topic: topic.name, partition: 0, offset, key: ACCOUNT as string, timestamp: Date.now() });
      for (const [offset, value] of values.entries()) await handler.apply(tx, value, meta(offset));
      await tx.query('COMMIT');
    } finally {
      tx.release();
    }
  }

  const table = async (schema: string, name: string): Promise<unknown[]> => (await db.pool.query(`SELECT * FROM ${quoteIdent(schema)}.${name} t ORDER BY t::text`)).rows as unknown[];

  it('rebuilds the thresholds the live run fired, whichever of the plan and the sends it reads first', async () => {
    const sends = Array.from({ length: 800 }, (_, n) => send(n));
    // Live: 800 sends counted against Free (1,000 a month) reach 80 %; then the account moves to Pro.
    await apply(live, 'live', topics.sendCommands, sends);
    await apply(live, 'live', topics.config, [plan('pro')]);
    const fired = producer.sent.filter((s) => s.topic === topics.usage.name).flatMap((s) => s.records as { value: UsageRecord }[]).map((r) => r.value);
    expect(fired.map((r) => [r.kind, r.percent])).toEqual([['threshold_reached', 80]]);
    const expected = await table('live', 'thresholds');
    expect(expected).toHaveLength(1);

    // Replayed with the plan first, the sends alone would fire nothing (800 of Pro's 100,000).
    await apply(replay, 'plan_first', topics.config, [plan('pro')]);
    await apply(replay, 'plan_first', topics.sendCommands, sends);
    expect(await table('plan_first', 'thresholds')).toEqual([]);
    await apply(replay, 'plan_first', topics.usage, fired);
    expect(await table('plan_first', 'thresholds')).toEqual(expected);
    expect(await table('plan_first', 'totals')).toEqual(await table('live', 'totals'));

    // Read in the live order, it fires none of its own either: the record is what says it fired.
    await apply(replay, 'sends_first', topics.sendCommands, sends);
    expect(await table('sends_first', 'thresholds')).toEqual([]);
    await apply(replay, 'sends_first', topics.usage, fired);
    await apply(replay, 'sends_first', topics.config, [plan('pro')]);
    expect(await table('sends_first', 'thresholds')).toEqual(expected);
  });
});
