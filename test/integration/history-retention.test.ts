import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationRoutes } from '../../api/conversations/routes.js';
import { errorsPlugin } from '../../api/plugins/errors.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import { conversationsProjection, seedMessageStates } from '../../processors/conversations/index.js';
import { LogGapsError, replayProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage, MessageStatus, SendCommand, SendStatus } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { readRange, topicName, topics, watermarks, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { routeContext } from '../support/route-context.js';

const ACCOUNT = asAccountId('acc_history');
const PROJECT = asProjectId('prj_history');
const NUMBER_A = asInstanceId('inst_history_a');
const NUMBER_B = asInstanceId('inst_history_b');
const ANA = '5511911112001@s.whatsapp.net';
const BIA = '5511911112002@s.whatsapp.net';
const T0 = Date.UTC(2026, 0, 1, 12);
const at = (seconds: number) => T0 + seconds * 1_000;

const auth: AuthContext = {
  accountId: ACCOUNT, projectId: PROJECT, keyId: 'key_test', role: 'owner', scopes: ['*'], locale: 'en', plan: 'pro', partnerKey: false,
};

let sequence = 0;

function send(instance: string, to: string, when: number, content: SendCommand['content']): SendCommand {
  const id = `msg_hist_out_${++sequence}`;
  return {
    event_id: asEventId(`cmd_${id}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: asInstanceId(instance),
    message_id: asMessageId(id), client_reference: `ref_${id}`, to, origin: 'api', campaign_id: null, idempotency_key_hash: null, expires_at: null,
    quoted_message_id: null, mentions: [], content,
  };
}

function fact(command: SendCommand, status: SendStatus, when: number): MessageStatus {
  return {
    event_id: asEventId(`evt_${command.message_id}_${status}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT,
    instance_id: command.instance_id, message_id: command.message_id, wa_message_id: `WA_${command.message_id}`,
    client_reference: command.client_reference, campaign_id: null, to: command.to, status,
    error_code: status === 'failed' ? 'not_connected' : null, error_reason: status === 'failed' ? 'socket closed' : null,
  };
}

function received(instance: string, chat: string, when: number, content: InboundMessage['content']): InboundMessage {
  const n = ++sequence;
  return {
    event_id: asEventId(`evt_hist_in_${n}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: asInstanceId(instance),
    origin: 'customer', message_id: asMessageId(`msg_hist_in_${n}`), wa_message_id: `WA_HIST_IN_${n}`, chat_jid: chat,
    sender: { jid: chat, lid: null, name: chat === ANA ? 'Ana' : 'Bia', phone: null }, from: chat, to: null, quoted_id: null, quoted_participant: null,
    group: null, mentions: [], content,
  };
}

async function buildApp(clients: Clients) {
  const server = Fastify().withTypeProvider<TypeBoxTypeProvider>();
  await server.register(errorsPlugin);
  server.addHook('onRequest', async (request) => {
    request.auth = auth;
  });
  await server.register(conversationRoutes, { ctx: routeContext(clients), signMediaUrl: (id) => `https://media.test/${id}` });
  return server;
}

const text = (body: string) => ({ kind: 'text' as const, body });
const EVENT_TOPICS: readonly TopicSpec<unknown>[] = [topics.sendCommands, topics.messageStatus, topics.inboundMessages];

/**
 * Conversation history outlives the retention of the topics that carried it: once gw.commands.send,
 * gw.messages.inbound and the first part of gw.messages.status are gone (deleted as retention
 * deletes them, with the broker's DeleteRecords) and the projection is dropped, a replay rebuilds
 * every message, change and conversation from the compacted changelog gw.messages.state, with the
 * status facts the log still holds merged in without moving any message back.
 */
describe('conversation history older than the retention of its topics', () => {
  let env: TestEnv;
  let clients: Clients;
  let live: RunningProjection | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  const projection = (mode: 'live' | 'replay') => conversationsProjection({ producer: clients.producer, mode });
  const eventTopics = () => EVENT_TOPICS.map((t) => topicName(t, clients.serdes.prefix));

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    app = await buildApp(clients);
  });

  afterAll(async () => {
    await app?.close();
    await live?.stop();
    await clients?.close();
    await env?.dispose();
  });

  async function tables(): Promise<Record<string, unknown[]>> {
    const dump: Record<string, unknown[]> = {};
    for (const [table, order] of [
      ['messages', 'message_id'],
      ['message_changes', 'change_id'],
      ['conversations', 'project_id, jid'],
      ['conversation_numbers', 'project_id, instance_id, jid'],
    ] as const) {
      dump[table] = (await clients.pool.query(`SELECT * FROM conversations.${table} ORDER BY ${order}`)).rows;
    }
    return dump;
  }

  /** What the API shows: the inbox and each conversation's history. */
  async function shown(): Promise<unknown[]> {
    const get = async (url: string) => {
      const response = await app!.inject({ method: 'GET', url });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ data: unknown[] }>().data;
    };
    return [await get('/conversations'), ...(await Promise.all([ANA, BIA].map((jid) => get(`/conversations/${encodeURIComponent(jid)}/messages?limit=100`))))];
  }

  async function deleteRecords(topic: string, upTo: ReadonlyMap<number, number>): Promise<void> {
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [topic] });
      await admin.deleteTopicRecords({ topic, partitions: [...upTo].map(([partition, offset]) => ({ partition, offset: String(offset) })) });
    } finally {
      await admin.disconnect();
    }
  }

  const highs = async (topic: string) => new Map([...(await watermarks(clients.kafka, topic))].map(([p, m]) => [p, m.high]));

  it('rebuilds messages, edits, statuses and conversations from the changelog after retention deleted their records', async () => {
    const hello = send(NUMBER_A, ANA, at(1), text('Your order ships tomorow'));
    const failed = send(NUMBER_A, ANA, at(2), text('Tracking link'));
    const toBia = send(NUMBER_B, BIA, at(3), text('Hi Bia'));
    const anaAnswer = received(NUMBER_A, ANA, at(5), text('Thanks!'));
    const biaFirst = received(NUMBER_B, BIA, at(6), text('Who is this?'));
    const biaSecond = received(NUMBER_B, BIA, at(7), text('Ah ok, my order'));
    const edit = send(NUMBER_A, ANA, at(8), { kind: 'edit', quoted_message_id: `WA_${hello.message_id}`, body: 'Your order ships tomorrow' });
    const biaEdit = received(NUMBER_B, BIA, at(9), { kind: 'edit', quoted_message_id: biaSecond.wa_message_id, body: 'Ah ok, about my order' });
    const biaDelete = received(NUMBER_B, BIA, at(10), { kind: 'delete', quoted_message_id: biaFirst.wa_message_id });

    live = await runProjection(clients, projection('live'));
    // A status before its send, as the connector may write them.
    const settle = () => waitUntilCaughtUp(clients, 'conversations', eventTopics(), Date.now() + 60_000);
    await clients.producer.send(topics.messageStatus, [{ key: NUMBER_B, value: fact(toBia, 'sent', at(4)) }]);
    await settle();
    await clients.producer.send(topics.sendCommands, [hello, failed, toBia, edit].map((value) => ({ key: value.instance_id, value })));
    // The status of our edit after the edit: its state then has both halves to keep.
    await settle();
    await clients.producer.send(topics.messageStatus, [
      ...[fact(hello, 'sent', at(2)), fact(hello, 'delivered', at(3)), fact(hello, 'read', at(4)), fact(failed, 'failed', at(3))],
      ...[fact(toBia, 'delivered', at(5)), fact(edit, 'sent', at(9))],
    ].map((value) => ({ key: value.instance_id, value })));
    await clients.producer.send(topics.inboundMessages, [anaAnswer, biaFirst, biaSecond, biaEdit, biaDelete].map((value) => ({ key: value.instance_id, value })));
    await settle();
    // What the log still holds of the status topic after retention: late facts, one of them lower than the message's status.
    const statusTopic = topicName(topics.messageStatus, clients.serdes.prefix);
    const statusesKept = await highs(statusTopic);
    await clients.producer.send(topics.messageStatus, [fact(hello, 'delivered', at(20)), fact(toBia, 'read', at(21))].map((value) => ({ key: value.instance_id, value })));
    await settle();

    const before = await tables();
    const history = await shown();
    expect(before.messages).toHaveLength(7); // the changes received have no row; ours has the row of its status
    expect(before.message_changes).toHaveLength(3);
    expect(before.conversations).toHaveLength(2);
    expect(JSON.stringify(history)).toContain('Your order ships tomorrow');
    expect(before.messages!.find((m) => (m as { message_id: string }).message_id === toBia.message_id)).toMatchObject({ status: 'read' });
    expect(before.messages!.find((m) => (m as { message_id: string }).message_id === failed.message_id)).toMatchObject({ status: 'failed', error_code: 'not_connected', error_reason: 'socket closed' });

    // Retention deletes every send and received message and the first status facts; the projection is lost with its database.
    for (const topic of eventTopics()) await deleteRecords(topic, topic === statusTopic ? statusesKept : await highs(topic));
    await live.stop();
    live = undefined;
    await clients.pool.query('DROP SCHEMA conversations CASCADE');

    // The event topics alone can no longer rebuild it.
    const refused = await replayProjection(clients, projection('live'), { deadlineMs: 60_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LogGapsError);

    const result = await replayProjection(clients, projection('replay'), { deadlineMs: 120_000 });
    expect(result.gaps).toEqual([]);
    expect(await tables()).toEqual(before);
    expect(await shown()).toEqual(history);
  });

  it('writes the history of a deployment older than the changelog to it once, and a replay rebuilds it from there', async () => {
    const upgraded = await createTestEnv();
    const upgradedClients = await testClients(upgraded);
    try {
      // The history as an earlier version left it: in the projection, none on the changelog, no seeding mark.
      const running = await runProjection(upgradedClients, conversationsProjection({ producer: upgradedClients.producer, mode: 'live' }));
      await running.stop();
      await upgradedClients.pool.query(`DROP TABLE conversations.changelog_seeded`);
      await upgradedClients.pool.query(
        `INSERT INTO conversations.messages (message_id, account_id, project_id, instance_id, jid, direction, origin, type, body, occurred_at, wa_message_id, status, queued_at, sent_at, chat_name, mentions)
         SELECT 'msg_old_' || lpad(n::text, 5, '0'), 'acc_old', 'prj_old', 'inst_old', '55119' || (10000000 + n % 50) || '@s.whatsapp.net',
                CASE WHEN n % 2 = 0 THEN 'out' ELSE 'in' END, CASE WHEN n % 2 = 0 THEN 'api' ELSE 'customer' END, 'text', 'old ' || n,
                timestamptz '2025-01-01' + n * interval '1 minute', 'WA_OLD_' || n, CASE WHEN n % 2 = 0 THEN 'sent' END,
                CASE WHEN n % 2 = 0 THEN timestamptz '2025-01-01' + n * interval '1 minute' END,
                CASE WHEN n % 2 = 0 THEN timestamptz '2025-01-01' + n * interval '1 minute' + interval '1 second' END,
                CASE WHEN n % 2 = 1 THEN 'Customer' END, '{}'
         FROM generate_series(1, 2400) AS n`,
      );
      // Our edit of message 2 (its status row and its change) and a customer's deletion of message 1 (a change only).
      await upgradedClients.pool.query(
        `INSERT INTO conversations.messages (message_id, account_id, project_id, instance_id, jid, direction, occurred_at, to_jid, status, sent_at, mentions)
         VALUES ('msg_old_edit', 'acc_old', 'prj_old', 'inst_old', '5511910000002@s.whatsapp.net', 'out', '2025-02-01', '5511910000002@s.whatsapp.net', 'sent', '2025-02-01', '{}')`,
      );
      await upgradedClients.pool.query(
        `INSERT INTO conversations.message_changes VALUES
           ('msg_old_edit', 'prj_old', 'inst_old', 'WA_OLD_2', 'edit', 'old 2, edited', '2025-02-01'),
           ('msg_old_delete', 'prj_old', 'inst_old', 'WA_OLD_1', 'delete', NULL, '2025-02-02')`,
      );
      const rowsOf = async (table: string) => (await upgradedClients.pool.query<Record<string, unknown>>(`SELECT * FROM conversations.${table}`)).rows;
      const dump = async () => [await rowsOf('messages ORDER BY message_id'), await rowsOf('message_changes ORDER BY change_id')];
      const before = await dump();

      expect(await seedMessageStates(upgradedClients)).toBe(2402);
      expect(await seedMessageStates(upgradedClients)).toBe(0);
      const name = topicName(topics.messageStates, upgradedClients.serdes.prefix);
      const marks = [...(await watermarks(upgradedClients.kafka, name))];
      const states = await readRange(upgradedClients, topics.messageStates, new Map(marks.map(([p, m]) => [p, m.low])), new Map(marks.map(([p, m]) => [p, m.high])));
      const values = states.flatMap((r) => (r.decoded.ok && r.decoded.value !== null ? [r.decoded.value] : []));
      expect(values).toHaveLength(2402);
      expect(values.find((v) => v.message_id === 'msg_old_edit')).toMatchObject({ message: { status: 'sent', type: null }, change: { change_kind: 'edit', body: 'old 2, edited' } });
      expect(values.find((v) => v.message_id === 'msg_old_delete')).toMatchObject({ account_id: null, message: null, change: { change_kind: 'delete' } });

      await upgradedClients.pool.query('DROP SCHEMA conversations CASCADE');
      const result = await replayProjection(upgradedClients, conversationsProjection({ producer: upgradedClients.producer, mode: 'replay' }), { deadlineMs: 120_000 });
      expect(result.records).toBe(2402);
      expect(await dump()).toEqual(before);
      // The rebuilt schema is marked: the next start does not seed again.
      expect(await seedMessageStates(upgradedClients)).toBe(0);
    } finally {
      await upgradedClients.close();
      await upgraded.dispose();
    }
  });
});
