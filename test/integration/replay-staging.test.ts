import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationsProjection } from '../../processors/conversations/index.js';
import { replayProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage, MessageState, MessageStatus, SendCommand, SendStatus } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { readRange, topicName, topics, watermarks, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

const ACCOUNT = asAccountId('acc_staging');
const PROJECT = asProjectId('prj_staging');
const T0 = Date.UTC(2026, 2, 1, 9);
const instance = (n: number) => asInstanceId(`inst_staging_${n % 6}`);
const chat = (n: number) => `55119333${String(n % 9).padStart(5, '0')}@s.whatsapp.net`;
// What COPY's text format must escape, in a text column and in an array.
const AWKWARD = 'tab\there, line\nbreak, back\\slash, "quotes", {braces}, \\N';

function send(n: number, content: SendCommand['content'], when = T0 + n * 1_000): SendCommand {
  return {
    event_id: asEventId(`cmd_staging_${n}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: instance(n),
    message_id: asMessageId(`msg_staging_out_${n}`), client_reference: n % 2 === 0 ? `ref_${n}` : null, to: chat(n), origin: 'api', campaign_id: null,
    idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: n % 5 === 0 ? [chat(n + 1), AWKWARD] : [], content,
  };
}

function fact(n: number, status: SendStatus, later: number): MessageStatus {
  return {
    event_id: asEventId(`evt_staging_${n}_${status}`), occurred_at: T0 + n * 1_000 + later, account_id: ACCOUNT, project_id: PROJECT,
    instance_id: instance(n), message_id: asMessageId(`msg_staging_out_${n}`), wa_message_id: `WA_STAGING_${n}`, client_reference: n % 2 === 0 ? `ref_${n}` : null,
    to: chat(n), status, error_code: status === 'failed' ? 'not_connected' : null, error_reason: status === 'failed' ? 'socket closed' : null, campaign_id: null,
  };
}

function received(n: number, content: InboundMessage['content']): InboundMessage {
  return {
    event_id: asEventId(`evt_staging_in_${n}`), occurred_at: T0 + n * 1_000 + 500, account_id: ACCOUNT, project_id: PROJECT, instance_id: instance(n),
    origin: 'customer', message_id: asMessageId(`msg_staging_in_${n}`), wa_message_id: `WA_STAGING_IN_${n}`, chat_jid: chat(n),
    sender: { jid: chat(n), lid: null, name: n % 3 === 0 ? null : `Customer ${AWKWARD} ${n % 4}`, phone: null }, from: chat(n), to: null,
    quoted_id: null, quoted_participant: null, group: null, mentions: [], content,
  };
}

const text = (body: string) => ({ kind: 'text' as const, body });

/**
 * A replay stages what the live projection applied already (COPY into unlogged tables) and merges
 * it set-based: the tables it swaps in equal those of a live run from offset zero, with messages
 * written many times over (statuses out of order, edits, deletions, reactions, changelog states)
 * across topics and partitions, and with records the live projection had not applied when the
 * replay started, whose states the replay writes to the changelog as the live one would have.
 */
describe('replay through staging tables', () => {
  let env: TestEnv;
  let clients: Clients;
  const running: RunningProjection[] = [];
  const projection = (mode: 'live' | 'replay') => conversationsProjection({ producer: clients.producer, mode });
  const eventTopics = () => [topics.sendCommands, topics.messageStatus, topics.inboundMessages].map((t) => topicName(t, clients.serdes.prefix));

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    for (const run of running) await run.stop();
    await clients?.close();
    await env?.dispose();
  });

  const produce = async <V>(spec: TopicSpec<V>, values: readonly V[], key: (v: V) => string) =>
    clients.producer.send(spec, values.map((value) => ({ key: key(value), value })));
  const byInstance = (v: { instance_id: string }) => v.instance_id;

  async function dump(schema: string): Promise<Record<string, unknown[]>> {
    const out: Record<string, unknown[]> = {};
    for (const [table, order] of [
      ['messages', 'message_id'],
      ['message_changes', 'change_id'],
      ['conversations', 'project_id, jid'],
      ['conversation_numbers', 'project_id, instance_id, jid'],
    ] as const) {
      out[table] = (await clients.pool.query(`SELECT * FROM "${schema}".${table} ORDER BY ${order}`)).rows;
    }
    return out;
  }

  async function liveCaughtUp(): Promise<void> {
    await waitUntilCaughtUp(clients, 'conversations', eventTopics(), Date.now() + 60_000);
  }

  it('swaps in the tables a live run from offset zero builds, and writes the states of what live had not applied', async () => {
    running.push(await runProjection(clients, projection('live')));
    // Facts before their sends, as a replay may read them; sends of every kind, received messages with awkward text.
    await produce(topics.messageStatus, [0, 1, 2, 3].map((n) => fact(n, 'delivered', 20)), byInstance);
    await produce(topics.sendCommands, Array.from({ length: 40 }, (_, n) => send(n, text(n % 7 === 0 ? AWKWARD : `hello ${n}`))), byInstance);
    await produce(topics.messageStatus, Array.from({ length: 30 }, (_, n) => fact(n, 'sent', 10)), byInstance);
    await produce(topics.inboundMessages, Array.from({ length: 20 }, (_, n) => received(n, text(`reply ${n} ${AWKWARD}`))), byInstance);
    await liveCaughtUp();
    // The same messages again, in other batches: read, failed, reactions, edits and deletions of sends and of received messages.
    await produce(topics.messageStatus, [...Array.from({ length: 15 }, (_, n) => fact(n, 'read', 30)), fact(20, 'failed', 15), fact(21, 'failed', 15), fact(21, 'read', 40)], byInstance);
    await produce(topics.sendCommands, [
      send(100, { kind: 'reaction', quoted_message_id: 'WA_STAGING_IN_3', emoji: '👍' }),
      send(101, { kind: 'reaction', quoted_message_id: 'WA_STAGING_IN_3', emoji: '' }),
      send(102, { kind: 'edit', quoted_message_id: 'WA_STAGING_4', body: `edited ${AWKWARD}` }),
      send(103, { kind: 'delete', quoted_message_id: 'WA_STAGING_5' }),
    ], byInstance);
    await produce(topics.messageStatus, [fact(102, 'sent', 5), fact(103, 'sent', 5), fact(100, 'delivered', 5)], byInstance);
    await produce(topics.inboundMessages, [
      received(200, { kind: 'edit', quoted_message_id: 'WA_STAGING_IN_6', body: 'changed my mind' }),
      received(201, { kind: 'delete', quoted_message_id: 'WA_STAGING_IN_7' }),
    ], byInstance);
    await liveCaughtUp();
    await running.pop()!.stop();

    // Records the live projection has not applied when the replay starts: the replay applies them,
    // and their states, and the live runner skips them after the swap.
    await produce(topics.messageStatus, [...Array.from({ length: 10 }, (_, n) => fact(n + 10, 'read', 50)), fact(22, 'failed', 60), fact(41, 'sent', 5)], byInstance);
    await produce(topics.sendCommands, [send(41, text('late')), send(104, { kind: 'edit', quoted_message_id: 'WA_STAGING_6', body: 'late edit' })], byInstance);
    await produce(topics.inboundMessages, [received(30, text('late reply'))], byInstance);

    await replayProjection(clients, projection('replay'), { deadlineMs: 120_000 });
    const { rows: leftovers } = await clients.pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'conversations' AND (table_name LIKE '%staging%' OR table_name LIKE 'staged%')`);
    expect(leftovers, 'the staging tables go at the swap').toEqual([]);
    running.push(await runProjection(clients, projection('live')));
    await produce(topics.messageStatus, [fact(41, 'delivered', 8), fact(0, 'failed', 90)], byInstance);
    await liveCaughtUp();
    await running.pop()!.stop();
    const replayed = await dump('conversations');
    expect(replayed.messages).toContainEqual(expect.objectContaining({ message_id: 'msg_staging_out_21', status: 'failed', read_at: new Date(T0 + 21_000 + 40) }));
    expect(replayed.messages).toContainEqual(expect.objectContaining({ message_id: 'msg_staging_out_7', body: AWKWARD, wa_message_id: 'WA_STAGING_7' }));
    expect(replayed.messages).toContainEqual(expect.objectContaining({ message_id: 'msg_staging_out_5', mentions: [chat(6), AWKWARD] }));

    // The changelog's last state of each message is its row: the replay merged what it had staged before writing states.
    const name = topicName(topics.messageStates, clients.serdes.prefix);
    const marks = [...(await watermarks(clients.kafka, name))];
    const records = await readRange(clients, topics.messageStates, new Map(marks.map(([p, m]) => [p, m.low])), new Map(marks.map(([p, m]) => [p, m.high])));
    const last = new Map<string, MessageState>();
    for (const record of records) if (record.decoded.ok && record.decoded.value !== null) last.set(record.decoded.value.message_id, record.decoded.value);
    for (const row of replayed.messages as Array<{ message_id: string; type: string | null; status: string | null; wa_message_id: string | null }>) {
      expect(last.get(row.message_id)?.message, row.message_id).toMatchObject({ type: row.type, status: row.status, wa_message_id: row.wa_message_id });
    }

    // The same log applied by a live runner from offset zero, in a schema of its own (after reading the changelog: it writes there too).
    const reference = await runProjection(clients, projection('live'), { schema: 'conversations_reference', groupId: `${clients.serdes.prefix}staging.reference` });
    running.push(reference);
    await waitUntilCaughtUp(clients, 'conversations_reference', eventTopics(), Date.now() + 60_000);
    await running.pop()!.stop();
    expect(replayed).toEqual(await dump('conversations_reference'));
  });
});
