import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationsProjection } from '../../processors/conversations/index.js';
import { LogGapsError, replayProjection, replayTable, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { startUsageWriter, usageEventsTable, usageProjection, type RunningUsageWriter } from '../../processors/usage/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, type AccountId } from '../../schemas/ids.js';
import type { MessageStatus, SendCommand, SendOrigin, UsageRecord } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { topicName, topics, watermarks, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';

const T0 = Date.now() - 60_000;

/**
 * Usage rebuilt at any age: once retention has deleted every send command, the ClickHouse table
 * `usage_events` and the Postgres usage counters, both dropped, are rebuilt by replay equal to
 * what the live writer and projection built, the sends read from the history's changelog
 * (`gw.messages.state`) and the media from `gw.usage`. A replay of the table swaps in while the
 * live writer runs, which then writes into the rebuilt table.
 */
describe('usage replayed after retention deleted the sends', () => {
  let env: TestEnv;
  let clients: Clients;
  let writer: RunningUsageWriter | undefined;
  const live: RunningProjection[] = [];
  let sequence = 0;
  const account = (n: number) => asAccountId(`acc_${env.id}_${n}`);

  function send(accountId: AccountId, origin: SendOrigin, content: SendCommand['content'] = { kind: 'text', body: 'hello' }, messageId = `msg_${env.id}_${++sequence}`): SendCommand {
    return {
      event_id: asEventId(`cmd_${env.id}_${++sequence}`), occurred_at: T0 + sequence * 10, account_id: accountId, project_id: asProjectId(`prj_${accountId}`),
      instance_id: asInstanceId(`inst_${accountId}`), message_id: asMessageId(messageId), client_reference: null, to: `55119${String(sequence % 7).padStart(8, '0')}@s.whatsapp.net`,
      origin, campaign_id: origin === 'campaign' ? 'cmp_1' : null, idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: [], content,
    };
  }

  function fact(command: SendCommand, status: MessageStatus['status']): MessageStatus {
    return {
      event_id: asEventId(`evt_${command.message_id}_${status}`), occurred_at: command.occurred_at + 5, account_id: command.account_id, project_id: command.project_id,
      instance_id: command.instance_id, message_id: command.message_id, wa_message_id: `WA_${command.message_id}`, client_reference: null, campaign_id: command.campaign_id, to: command.to,
      status, error_code: null, error_reason: null,
    };
  }

  function media(accountId: AccountId, bytes: number): UsageRecord {
    return {
      event_id: asEventId(`use_${env.id}_${++sequence}`), occurred_at: T0 + sequence * 10, account_id: accountId, project_id: asProjectId(`prj_${accountId}`),
      instance_id: null, kind: 'media_stored', quantity: bytes, message_id: null, media_id: `media_${sequence}`, allowance: null, percent: null, used: null, included: null, plan: null,
    };
  }

  const produce = async <V extends { instance_id: string | null; account_id: string | null }>(spec: TopicSpec<V>, values: readonly V[]) => {
    for (let i = 0; i < values.length; i += 200) {
      await clients.producer.send(spec, values.slice(i, i + 200).map((value) => ({ key: value.instance_id ?? value.account_id ?? '', value })));
    }
  };

  const name = (spec: TopicSpec<unknown>) => topicName(spec, clients.serdes.prefix);
  const inputs = (...specs: TopicSpec<unknown>[]) => specs.map(name);

  /** The table as its readers count it, ordered. */
  const table = () => clients.clickhouse.query<Record<string, unknown>>('SELECT * FROM usage_events FINAL ORDER BY account_id, kind, event_id');
  const counters = async () => ({
    counted: (await clients.pool.query('SELECT * FROM usage.counted ORDER BY kind, ref')).rows,
    totals: (await clients.pool.query('SELECT * FROM usage.totals ORDER BY account_id, allowance, period')).rows,
    thresholds: (await clients.pool.query('SELECT * FROM usage.thresholds ORDER BY event_id')).rows,
  });

  async function deleteRecords(spec: TopicSpec<unknown>): Promise<void> {
    const topic = name(spec);
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = [...(await watermarks(clients.kafka, topic))].map(([partition, { high }]) => ({ partition, offset: String(high) }));
      await admin.deleteTopicRecords({ topic, partitions });
    } finally {
      await admin.disconnect();
    }
  }

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    await writer?.stop();
    for (const projection of live) await projection.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('rebuilds usage_events and the usage counters equal to the live ones from the changelog and gw.usage', async () => {
    const [a, b] = [account(1), account(2)];
    const sends = [...Array.from({ length: 40 }, (_, n) => send(n % 3 === 0 ? b : a, n % 4 === 0 ? 'campaign' : 'api'))];
    // A command written twice for one send, counted once.
    const again = { ...sends[0]!, event_id: asEventId(`cmd_${env.id}_again`) };
    // Our edit of a message, counted as a send; a status fact gives it a row.
    const edit = send(a, 'api', { kind: 'edit', quoted_message_id: `WA_${sends[1]!.message_id}`, body: 'fixed' });
    // Refused: taken after its deadline, it counts nowhere.
    const late = { ...send(a, 'api'), expires_at: Date.now() - 60_000 };
    const facts = [...sends.slice(0, 10).map((s) => fact(s, 'sent')), fact(edit, 'sent')];
    const stored = [media(a, 30_000), media(b, 50_000), media(a, 20_000), media(a, -30_000)] // the last one removes stored media;

    live.push(await runProjection(clients, conversationsProjection({ producer: clients.producer, mode: 'live' })));
    live.push(await runProjection(clients, usageProjection(clients.producer, 'live')));
    writer = await startUsageWriter(clients);
    await produce(topics.sendCommands, [...sends, again, edit, late]);
    await produce(topics.messageStatus, facts);
    await produce(topics.usage, stored);
    const counted = sends.length + 1 + stored.length; // the sends, the edit and the media records
    await waitUntilCaughtUp(clients, 'conversations', inputs(topics.sendCommands, topics.messageStatus, topics.inboundMessages), Date.now() + 60_000);
    await waitUntilCaughtUp(clients, 'usage', inputs(topics.config, topics.sendCommands, topics.usage), Date.now() + 60_000);
    await waitFor('the live writer to write every counted row', async () => (await table()).length === counted, { timeoutMs: 60_000 });
    const liveTable = await table();
    const liveCounters = await counters();
    expect(liveTable.filter((row) => row.kind === 'message_sent')).toHaveLength(sends.length + 1);
    expect(liveCounters.counted).toHaveLength(counted);

    // A replay while the live writer runs swaps in a table equal to the live one; the writer then writes into it.
    const swapped = await replayTable(clients, usageEventsTable('replay'), { deadlineMs: 120_000 });
    expect(swapped.gaps).toEqual([]);
    expect(await table()).toEqual(liveTable);
    const after = send(b, 'api');
    await produce(topics.sendCommands, [after]);
    await waitFor('the live writer to write into the swapped-in table', async () => (await table()).some((row) => row.event_id === after.message_id), { timeoutMs: 60_000 });
    await waitUntilCaughtUp(clients, 'conversations', inputs(topics.sendCommands, topics.messageStatus, topics.inboundMessages), Date.now() + 60_000);
    await waitUntilCaughtUp(clients, 'usage', inputs(topics.config, topics.sendCommands, topics.usage), Date.now() + 60_000);
    const before = await table();
    const countersBefore = await counters();
    expect(await clients.clickhouse.query(`SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE '%replay%'`), 'the old table is dropped').toEqual([]);

    // Retention deletes every send command; ClickHouse and Postgres are lost.
    await writer.stop();
    writer = undefined;
    for (const projection of live.splice(0)) await projection.stop();
    await deleteRecords(topics.sendCommands);
    await clients.clickhouse.command('DROP TABLE usage_events');
    await clients.pool.query('DROP SCHEMA usage CASCADE');

    // The live inputs alone can no longer rebuild them.
    await expect(replayTable(clients, usageEventsTable('live'), { deadlineMs: 60_000 })).rejects.toBeInstanceOf(LogGapsError);

    const replayed = await replayTable(clients, usageEventsTable('replay'), { deadlineMs: 120_000 });
    expect(replayed.gaps).toEqual([]);
    expect(await table()).toEqual(before);
    await replayProjection(clients, usageProjection(clients.producer, 'replay'), { deadlineMs: 120_000 });
    expect(await counters()).toEqual(countersBefore);
  });

  it('loses no send the live writer took while a replay of the table ran and swapped in', async () => {
    const c = account(3);
    writer = await startUsageWriter(clients);
    const sent: string[] = [];
    let replaying = true;
    const producing = (async () => {
      while (replaying) {
        const batch = Array.from({ length: 20 }, () => send(c, 'api'));
        await produce(topics.sendCommands, batch);
        sent.push(...batch.map((s) => s.message_id));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      await replayTable(clients, usageEventsTable('replay'), { deadlineMs: 120_000 });
    } finally {
      replaying = false;
      await producing;
    }
    const counted = async () =>
      (await clients.clickhouse.query<{ event_id: string }>(`SELECT event_id FROM usage_events FINAL WHERE account_id = {account:String} ORDER BY event_id`, { account: c })).map((r) => r.event_id);
    // The live writer takes what came after the swap; what it put in the old table before the swap, the catch-up wrote again.
    await waitFor('every send in the table', async () => (await counted()).length >= sent.length, { timeoutMs: 30_000 }).catch(() => undefined);
    expect(await counted()).toEqual([...sent].sort());
  });

  it('gateway replay usage fails at once, saying what to do, while another process holds the embedded ClickHouse', async () => {
    if (env.config.clickhouse.kind !== 'embedded') return;
    await clients.clickhouse.query('SELECT 1');
    const { rows: schemaBefore } = await clients.pool.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'usage%' ORDER BY nspname`);
    const replay = spawnGateway(['replay', 'usage'], { ...env.env, CHDB_PATH: env.config.clickhouse.path });
    expect(await replay.exited, replay.output()).toBe(1);
    expect(replay.output()).toContain('another process holds it');
    expect(replay.output()).toContain('CLICKHOUSE_URL');
    const { rows: schemaAfter } = await clients.pool.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'usage%' ORDER BY nspname`);
    expect(schemaAfter, 'nothing is rebuilt').toEqual(schemaBefore);
  });
});
