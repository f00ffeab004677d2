import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectionsFor, replayable, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { AudienceRecord, ConfigRecord, InboundMessage, MessageStatus, SendCommand, UsageRecord } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { endOffsets, topicName, topics, watermarks, type TopicSpec } from '../../topics/index.js';
import { analyticsTables } from '../../processors/analytics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';

const ACCOUNT = asAccountId('acc_all');
const PROJECT = asProjectId('prj_all');
const T0 = Date.now() - 60_000;

function send(n: number): SendCommand {
  return {
    event_id: asEventId(`cmd_all_${n}`), occurred_at: T0 + n * 10, account_id: ACCOUNT, project_id: PROJECT, instance_id: asInstanceId(`inst_${n % 5}`),
    message_id: asMessageId(`msg_out_${n}`), client_reference: `ref_${n}`, to: `55119${String(n % 40).padStart(8, '0')}@s.whatsapp.net`, origin: 'api',
    campaign_id: null, idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: [], content: { kind: 'text', body: `hello ${n}` },
  };
}

function fact(command: SendCommand, status: MessageStatus['status'], later: number): MessageStatus {
  return {
    event_id: asEventId(`evt_${command.message_id}_${status}`), occurred_at: command.occurred_at + later, account_id: ACCOUNT, project_id: PROJECT,
    instance_id: command.instance_id, message_id: command.message_id, wa_message_id: `WA_${command.message_id}`, client_reference: command.client_reference, campaign_id: null,
    to: command.to, status, error_code: null, error_reason: null,
  };
}

function received(n: number): InboundMessage {
  const chat = `55119${String(n % 40).padStart(8, '0')}@s.whatsapp.net`;
  return {
    // The later half after every send: those conversations have unread messages.
    event_id: asEventId(`evt_in_${n}`), occurred_at: n < 150 ? T0 + n * 10 + 5 : T0 + 9_000 + n, account_id: ACCOUNT, project_id: PROJECT, instance_id: asInstanceId(`inst_${n % 5}`),
    origin: 'customer', message_id: asMessageId(`msg_in_${n}`), wa_message_id: `WA_IN_${n}`, chat_jid: chat,
    sender: { jid: chat, lid: null, name: n % 3 === 0 ? null : `Customer ${n % 7}`, phone: null }, from: chat, to: null, quoted_id: null,
    quoted_participant: null, group: null, mentions: [], content: { kind: 'text', body: `reply ${n}` },
  };
}

function stored(n: number, bytes: number): UsageRecord {
  return {
    event_id: asEventId(`use_${n}`), occurred_at: T0 + n, account_id: ACCOUNT, project_id: PROJECT, instance_id: null, kind: 'media_stored', quantity: bytes,
    message_id: null, media_id: `med_${n}`, allowance: null, percent: null, used: null, included: null, plan: null,
  };
}

const plan: ConfigRecord = {
  event_id: asEventId('cfg_all'), occurred_at: T0, account_id: ACCOUNT, project_id: null, instance_id: null, entity_id: ACCOUNT,
  entity: { kind: 'account', name: 'All', email: 'all@example.com', locale: 'en', plan: 'free', country: null },
};

/**
 * `gateway replay --all` as an operator runs it: every replayable projection rebuilt from the log
 * and swapped in, each table equal to what the live projections built; refused up front, with
 * every projection's gaps, once retention has cut an input.
 */
describe('replay --all', () => {
  let env: TestEnv;
  let clients: Clients;
  const running: RunningProjection[] = [];

  const inputsOf = (name: string) => projectionsFor(clients, 'live').get(name)!.handlers.map((h) => topicName(h.topic, clients.serdes.prefix));

  /** Every table of every replayable projection, rows in a fixed order (offsets without their commit times). */
  async function dump(): Promise<Record<string, unknown[]>> {
    const out: Record<string, unknown[]> = {};
    for (const schema of replayable) {
      const { rows: tables } = await clients.pool.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema],
      );
      for (const { table_name: table } of tables) {
        // When the changelog was seeded is the only thing a replay may tell apart.
        if (table === 'changelog_seeded') continue;
        const columns = table === '_offsets' ? 'topic, partition, next_offset' : '*';
        const rows = (await clients.pool.query(`SELECT ${columns} FROM "${schema}"."${table}" t`)).rows as unknown[];
        // A replay reads changelogs the live projection does not (gw.messages.state): their offsets are its own.
        const kept = table === '_offsets' ? rows.filter((row) => !(row as { topic: string }).topic.endsWith('.state')) : rows;
        // Ordered as JavaScript reads the rows: a time's microseconds, which no record carries, do not reorder them.
        out[`${schema}.${table}`] = kept.map((row) => [JSON.stringify(row), row] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
      }
    }
    return out;
  }

  const announced = async () => [...(await endOffsets(clients.kafka, topicName(topics.events, clients.serdes.prefix))).values()].reduce((a, b) => a + b, 0);

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    for (const projection of running) await projection.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('rebuilds every projection equal to the live one, announcing nothing again', async () => {
    const sends = Array.from({ length: 900 }, (_, n) => send(n));
    const produce = async <V>(spec: TopicSpec<V>, values: readonly V[], key: (v: V) => string) => {
      for (let i = 0; i < values.length; i += 200) await clients.producer.send(spec, values.slice(i, i + 200).map((value) => ({ key: key(value), value })));
    };
    await produce(topics.config, [plan], () => ACCOUNT);
    // Facts of the first sends before the sends themselves, as a replay may read them.
    await produce(topics.messageStatus, sends.slice(0, 300).flatMap((s, i) => [fact(s, 'delivered', 2), ...(i % 4 === 0 ? [fact(s, 'read', 3)] : [])]), (f) => f.instance_id);
    await produce(topics.sendCommands, sends, (s) => s.instance_id);
    await produce(topics.messageStatus, sends.slice(300, 600).map((s) => fact(s, 'sent', 1)), (f) => f.instance_id);
    await produce(topics.inboundMessages, Array.from({ length: 300 }, (_, n) => received(n)), (m) => m.instance_id);
    await produce(topics.usage, [stored(1, 30_000_000), stored(2, 60_000_000), stored(3, -5_000_000)], () => ACCOUNT);
    // Audience lists: phones listed (one removed again), a group and its members (one taken out).
    const entry = (entityId: string, entity: AudienceRecord['entity']): AudienceRecord => ({
      event_id: asEventId(`evt_${entityId}`), occurred_at: T0, account_id: ACCOUNT, project_id: null, instance_id: null, entity_id: entityId, entity,
    });
    await produce(topics.audience, [
      ...Array.from({ length: 20 }, (_, n) => entry(`sup_${n}`, { kind: 'listed_phone', list: n % 2 === 0 ? 'suppressions' : 'blocklist', phone: `+55119000${String(n).padStart(5, '0')}`, reason: n % 3 === 0 ? 'bounce' : null, created_at: T0 + n })),
      entry('grp_1', { kind: 'contact_group', name: 'VIP', created_at: T0 }),
      ...Array.from({ length: 5 }, (_, n) => entry(`grp_1:ct_${n}`, { kind: 'group_member', group_id: 'grp_1', contact_id: `ct_${n}`, added_at: T0 + n })),
    ], (r) => r.entity_id);
    await clients.producer.send(topics.audience, [{ key: 'sup_4', value: null }, { key: 'grp_1:ct_2', value: null }]);

    const live = projectionsFor(clients, 'live');
    for (const name of replayable) running.push(await runProjection(clients, live.get(name)!));
    for (const name of replayable) await waitUntilCaughtUp(clients, name, inputsOf(name), Date.now() + 60_000);
    for (const projection of running.splice(0)) await projection.stop();
    const before = await dump();
    // The live usage projection fired 80 and 90 percent of Free's messages (900 sends) and media (90 MB), on gw.events.
    expect(before['usage.thresholds']).toHaveLength(4);
    expect(before['conversations.conversations']).toHaveLength(40);
    expect(before['audience.listed_phones']).toHaveLength(19);
    expect(before['audience.group_members']).toHaveLength(4);
    expect(before['conversations.conversations']).toContainEqual(expect.objectContaining({ unread_count: 4, last_message_direction: 'in' }));
    const events = await announced();

    const replay = spawnGateway(['replay', '--all'], env.env);
    expect(await replay.exited, replay.output()).toBe(0);
    const lines = replay.stdout().trim().split('\n');
    const results = JSON.parse(lines.pop()!) as Array<{ projection: string; records: number }>;
    // The Postgres projections, then the ClickHouse tables (usage-replay.test.ts compares the table with the live one).
    expect(results.map((r) => r.projection)).toEqual([...replayable, 'usage_events', ...analyticsTables.map((t) => t.name)]);
    // The conversations replay reads the messages' changelog too: a state per message the live projection changed.
    const held = await watermarks(clients.kafka, topicName(topics.messageStates, clients.serdes.prefix));
    const states = [...held.values()].reduce((n, w) => n + w.high - w.low, 0);
    expect(states).toBeGreaterThanOrEqual(900 + 300);
    expect(results.find((r) => r.projection === 'conversations')!.records).toBe(900 + 600 + 75 + 300 + states);
    // Every send, media and threshold record, and every message state.
    expect(results.find((r) => r.projection === 'usage_events')!.records).toBeGreaterThanOrEqual(900 + 3 + states);
    for (const name of replayable) expect(lines.find((line) => line.startsWith(`${name} `)), replay.output()).toMatch(/\d+ records +[\d.]+ s +\d+ records\/s/);

    expect(await dump()).toEqual(before);
    expect(await announced(), 'a replay announces no threshold again').toBe(events);
    const { rows: leftovers } = await clients.pool.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE '%\\_\\_replay\\_%' OR nspname LIKE '%\\_\\_retired\\_%'`);
    expect(leftovers).toEqual([]);
  });

  it('refuses up front, naming the gaps of every projection and table, once an input lost records', async () => {
    /** Deletes the records of the topic's first partition that holds some, as retention deletes them; returns what is lost. */
    async function cut(spec: TopicSpec<unknown>): Promise<string> {
      const topic = topicName(spec, clients.serdes.prefix);
      const [partition, { high }] = [...(await watermarks(clients.kafka, topic))].find(([, w]) => w.high > 0)!;
      const admin = clients.kafka.admin();
      await admin.connect();
      try {
        await admin.fetchTopicMetadata({ topics: [topic] });
        await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: String(high) }] });
      } finally {
        await admin.disconnect();
      }
      return `${topic} partition ${partition} records 0-${high - 1}`;
    }
    const sends = await cut(topics.sendCommands);
    // gw.usage is kept for ever; an operator's deletion (or a retention set shorter by hand) still cuts it.
    const media = await cut(topics.usage);
    const before = await dump();

    const replay = spawnGateway(['replay', '--all'], env.env);
    expect(await replay.exited, replay.output()).toBe(1);
    expect(replay.output()).toContain(`replaying usage would lose what the log no longer holds: ${media}`);
    expect(replay.output()).toContain(`replaying usage_events would lose what the log no longer holds: ${media}`);
    // The conversations and usage read what the send topic lost from the history's changelog (gw.messages.state): not refused.
    expect(replay.output()).not.toContain(sends);
    expect(replay.output()).not.toContain('replaying conversations');
    expect(replay.output()).toContain('--allow-gaps');
    expect(await dump(), 'nothing is rebuilt when one projection is refused').toEqual(before);
  });
});
