import Fastify from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationRoutes } from '../../api/conversations/routes.js';
import { routeContext } from '../support/route-context.js';
import { errorsPlugin } from '../../api/plugins/errors.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import { instancesProjection, replayProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { conversationsProjection, lastInstanceFor, lastInstanceReader } from '../../processors/conversations/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage, InstanceState, MessageStatus, SendCommand, SendStatus } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

const ACCOUNT = asAccountId('acc_inbox');
const PROJECT = asProjectId('prj_inbox');
const NUMBER_A = asInstanceId('inst_a');
const NUMBER_B = asInstanceId('inst_b');
const NUMBER_C = asInstanceId('inst_c');
const T0 = Date.UTC(2026, 0, 1, 12);
const at = (seconds: number) => T0 + seconds * 1_000;

const auth: AuthContext = {
  accountId: ACCOUNT, projectId: PROJECT, keyId: 'key_test', role: 'owner', scopes: ['*'], locale: 'en', plan: 'pro', partnerKey: false,
};

let sequence = 0;

function send(instance: string, to: string, when: number, content: SendCommand['content'], messageId = `msg_out_${++sequence}`): SendCommand {
  return {
    event_id: asEventId(`cmd_${messageId}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: asInstanceId(instance),
    message_id: asMessageId(messageId), client_reference: `ref_${messageId}`, to, origin: 'api', campaign_id: null, idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: [], content,
  };
}

function fact(command: SendCommand, status: SendStatus, when: number): MessageStatus {
  return {
    event_id: asEventId(`evt_${command.message_id}_${status}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT,
    instance_id: command.instance_id, message_id: command.message_id, wa_message_id: `WA_${command.message_id}`,
    client_reference: command.client_reference, campaign_id: command.campaign_id, to: command.to, status,
    error_code: status === 'failed' ? 'not_connected' : null, error_reason: status === 'failed' ? 'socket closed' : null,
  };
}

function received(instance: string, chat: string, when: number, content: InboundMessage['content'], overrides: Partial<InboundMessage> = {}): InboundMessage {
  const n = ++sequence;
  return {
    event_id: asEventId(`evt_in_${n}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: asInstanceId(instance),
    origin: 'customer', message_id: asMessageId(`msg_in_${n}`), wa_message_id: `WA_IN_${n}`, chat_jid: chat,
    sender: { jid: chat, lid: null, name: 'Ana', phone: null }, from: chat, to: null, quoted_id: null, quoted_participant: null,
    group: null, mentions: [], content, ...overrides,
  };
}

const text = (body: string) => ({ kind: 'text' as const, body });

interface Page<T> {
  data: T[];
  next_cursor: string | null;
}
type Item = Record<string, unknown>;

describe('conversations projection and inbox routes on the real stack', () => {
  let env: TestEnv;
  let clients: Clients;
  let live: RunningProjection;
  let instances: RunningProjection;
  let app: Awaited<ReturnType<typeof buildApp>>;
  const conversations = (mode: 'live' | 'replay') => conversationsProjection({ producer: clients.producer, mode });
  const topicNames = () => conversations('live').handlers.map((h) => topicName(h.topic, clients.serdes.prefix));

  async function buildApp() {
    const server = Fastify({ ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } } }).withTypeProvider<TypeBoxTypeProvider>();
    await server.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'test', version: '0' } } });
    await server.register(errorsPlugin);
    server.addHook('onRequest', async (request) => {
      request.auth = auth;
    });
    await server.register(conversationRoutes, {
      ctx: routeContext(clients),
      signMediaUrl: (id) => `https://media.test/${id}?sig=fresh`,
    });
    return server;
  }

  async function settle(): Promise<void> {
    await waitUntilCaughtUp(clients, 'conversations', topicNames(), Date.now() + 60_000);
  }

  async function get<T>(url: string): Promise<T> {
    const response = await app.inject({ method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<T>();
  }

  async function history(jid: string, limit = 200): Promise<Item[]> {
    return (await get<Page<Item>>(`/conversations/${encodeURIComponent(jid)}/messages?limit=${limit}`)).data;
  }

  async function tableDump(schema: string): Promise<Record<string, unknown[]>> {
    const dump: Record<string, unknown[]> = {};
    for (const [table, order] of [['messages', 'message_id'], ['conversations', 'project_id, jid'], ['conversation_numbers', 'project_id, instance_id, jid']]) {
      dump[table!] = (await clients.pool.query(`SELECT * FROM "${schema}".${table} ORDER BY ${order}`)).rows;
    }
    return dump;
  }

  /** The project's numbers in the instances projection, as the routes look a number filter up there. */
  async function registerNumbers(): Promise<void> {
    const state = (instanceId: InstanceState['instance_id']): InstanceState => ({
      event_id: asEventId(`evt_state_${instanceId}`), occurred_at: T0, account_id: ACCOUNT, project_id: PROJECT, instance_id: instanceId,
      phone: null, nickname: null, status: 'connected', previous_status: null, reason: null, health_score: 100, pool_ids: [], connector: 'sandbox', deleted: false,
    });
    await clients.producer.send(topics.instances, [NUMBER_A, NUMBER_B, NUMBER_C].map((id) => ({ key: id, value: state(id) })));
    await waitUntilCaughtUp(clients, 'instances', [topicName(topics.instances, clients.serdes.prefix)], Date.now() + 60_000);
  }

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    live = await runProjection(clients, conversations('live'));
    instances = await runProjection(clients, instancesProjection);
    await registerNumbers();
    app = await buildApp();
  });

  afterAll(async () => {
    await app?.close();
    await live?.stop();
    await instances?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('moves a send forward through its statuses whatever order the facts arrive in; failed is final', async () => {
    const customer = '5511911110001@s.whatsapp.net';
    const read = send(NUMBER_A, customer, at(1), text('hello'));
    const failed = send(NUMBER_A, customer, at(2), text('again'));
    // Facts first, some late and lower, then the sends they are about.
    await clients.producer.send(topics.messageStatus, [
      { key: NUMBER_A, value: fact(read, 'delivered', at(4)) },
      { key: NUMBER_A, value: fact(read, 'read', at(5)) },
      { key: NUMBER_A, value: fact(read, 'sent', at(3)) },
      { key: NUMBER_A, value: fact(read, 'delivered', at(6)) },
      { key: NUMBER_A, value: fact(failed, 'failed', at(7)) },
      { key: NUMBER_A, value: fact(failed, 'delivered', at(8)) },
    ]);
    await settle();
    // Status facts alone make no message and no conversation.
    const early = await app.inject({ method: 'GET', url: `/conversations/${encodeURIComponent(customer)}/messages` });
    expect(early.statusCode).toBe(404);
    await clients.producer.send(topics.sendCommands, [{ key: NUMBER_A, value: read }, { key: NUMBER_A, value: failed }]);
    await settle();

    const [second, first] = await history(customer);
    expect(first).toMatchObject({
      message_id: read.message_id, direction: 'out', origin: 'api', type: 'text', body: 'hello', status: 'read',
      wa_message_id: `WA_${read.message_id}`, client_reference: read.client_reference,
      queued_at: new Date(at(1)).toISOString(), sent_at: new Date(at(3)).toISOString(),
      delivered_at: new Date(at(4)).toISOString(), read_at: new Date(at(5)).toISOString(),
    });
    expect(second).toMatchObject({ message_id: failed.message_id, status: 'failed', error_code: 'not_connected', failed_at: new Date(at(7)).toISOString() });
  });

  it('keeps one conversation per customer across the numbers, with the last number for affinity', async () => {
    const customer = '5511911110002@s.whatsapp.net';
    const other = '5511911110003@s.whatsapp.net';
    await clients.producer.send(topics.inboundMessages, [
      { key: NUMBER_A, value: received(NUMBER_A, customer, at(10), text('hi from A')) },
      { key: NUMBER_C, value: received(NUMBER_C, other, at(11), text('only C')) },
    ]);
    await clients.producer.send(topics.sendCommands, [{ key: NUMBER_B, value: send(NUMBER_B, customer, at(12), text('answer from B')) }]);
    await settle();

    const all = await get<Page<Item>>('/conversations');
    const mine = all.data.filter((c) => c.jid === customer);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      phone: '+5511911110002', is_group: false, name: 'Ana', last_instance_id: NUMBER_B, instance_ids: [NUMBER_A, NUMBER_B], unread_count: 0,
      last_message: { type: 'text', direction: 'out', preview: 'answer from B', timestamp: new Date(at(12)).toISOString() },
    });
    expect(await lastInstanceFor(clients.pool, PROJECT, customer)).toBe(NUMBER_B);
    expect(await lastInstanceFor(clients.pool, PROJECT, '5511900000000@s.whatsapp.net')).toBeNull();
    // As sends ask it: concurrent lookups of a project answered by one read, each its own answer.
    let reads = 0;
    const counted = { query: (...args: Parameters<Clients['pool']['query']>) => ((reads += 1), clients.pool.query(...args)) } as unknown as Clients['pool'];
    const lastInstance = lastInstanceReader(counted);
    const lookups = [customer, '5511900000000@s.whatsapp.net', other, customer];
    expect(await Promise.all(lookups.map((jid) => lastInstance(PROJECT, jid)))).toEqual([NUMBER_B, null, NUMBER_C, NUMBER_B]);
    expect(reads).toBe(1);

    const onA = (await get<Page<Item>>(`/conversations?instance_id=${NUMBER_A}`)).data.map((c) => c.jid);
    expect(onA).toContain(customer);
    expect(onA).not.toContain(other);
    const onC = (await get<Page<Item>>(`/conversations?instance_id=${NUMBER_C}`)).data.map((c) => c.jid);
    expect(onC).toEqual([other]);
    // A number that is not the project's is not found, rather than an empty inbox.
    const foreign = await app.inject({ method: 'GET', url: '/conversations?instance_id=inst_of_another_project' });
    expect([foreign.statusCode, foreign.json<{ code: string }>().code]).toEqual([404, 'not_found']);
    // Newest first.
    const times = all.data.map((c) => (c.last_message as { timestamp: string }).timestamp);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('counts received messages after the last outgoing one as unread, once each', async () => {
    const customer = '5511911110004@s.whatsapp.net';
    const first = received(NUMBER_A, customer, at(20), text('one'));
    await clients.producer.send(topics.inboundMessages, [
      { key: NUMBER_A, value: first },
      { key: NUMBER_A, value: first }, // redelivered
      { key: NUMBER_A, value: received(NUMBER_A, customer, at(22), text('two')) },
    ]);
    await clients.producer.send(topics.sendCommands, [{ key: NUMBER_A, value: send(NUMBER_A, customer, at(21), text('reply')) }]);
    await settle();
    const conversation = (await get<Page<Item>>('/conversations')).data.find((c) => c.jid === customer);
    expect(conversation).toMatchObject({ unread_count: 1, last_message: { preview: 'two', direction: 'in' } });
    expect(await history(customer)).toHaveLength(3);
  });

  it('shows every received type with its fields, groups, mentions and the owner’s own sends', async () => {
    const customer = '5511911110005@s.whatsapp.net';
    const group = '120363000000000001@g.us';
    const media = (id: string, mime: string, filename: string | null) => ({ id, mime_type: mime, filename, size: 2048, storage_key: `k/${id}`, sha256: 'ab' });
    const mediaId = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    const items: InboundMessage[] = [
      received(NUMBER_A, customer, at(30), text('plain')),
      received(NUMBER_A, customer, at(31), { kind: 'image', media: media(mediaId(1), 'image/jpeg', null), caption: 'a photo' }),
      received(NUMBER_A, customer, at(32), { kind: 'video', media: media(mediaId(2), 'video/mp4', null), caption: null }),
      received(NUMBER_A, customer, at(33), { kind: 'audio', media: media(mediaId(3), 'audio/ogg', null), ptt: true }),
      received(NUMBER_A, customer, at(34), { kind: 'document', media: media(mediaId(4), 'application/pdf', 'terms.pdf'), caption: 'terms' }),
      received(NUMBER_A, customer, at(35), { kind: 'sticker', media: media(mediaId(5), 'image/webp', null) }),
      received(NUMBER_A, customer, at(36), { kind: 'location', latitude: -23.56, longitude: -46.65, name: 'Paulista', address: 'Av. Paulista' }),
      received(NUMBER_A, customer, at(37), { kind: 'contact', contact_name: 'Bia', contact_vcard: 'BEGIN:VCARD\nEND:VCARD' }),
      received(NUMBER_A, customer, at(38), { kind: 'reaction', quoted_message_id: 'WA_X', emoji: '👍' }, { quoted_id: 'WA_X' }),
      received(NUMBER_A, customer, at(39), { kind: 'poll', name: 'Lunch?', options: ['yes', 'no'], selectable_count: 1, message_secret: Buffer.from('secret') }),
      received(NUMBER_A, customer, at(40), { kind: 'poll_vote', poll_message_id: 'WA_POLL', selected: ['yes'] }),
      received(NUMBER_A, customer, at(41), text('a reply'), { quoted_id: 'WA_Q', quoted_participant: '5511999999999@s.whatsapp.net' }),
      received(NUMBER_A, customer, at(42), text('from my phone'), {
        origin: 'external', sender: { jid: '5511900000001@s.whatsapp.net', lid: null, name: 'Shop', phone: null },
        from: '5511900000001@s.whatsapp.net', to: customer,
      }),
      received(NUMBER_A, group, at(43), text('@ana hello all'), {
        group: { jid: group, name: 'Team' }, mentions: ['5511911110005@s.whatsapp.net'], from: group,
        sender: { jid: customer, lid: '4242@lid', name: 'Ana', phone: null },
      }),
    ];
    await clients.producer.send(topics.inboundMessages, items.map((value) => ({ key: NUMBER_A, value })));
    await settle();

    // Oldest first, so the newest message of a type is the one kept.
    const byType = new Map((await history(customer)).reverse().map((item) => [`${item.type as string}:${item.direction as string}`, item]));
    expect(byType.get('text:in')).toMatchObject({ body: 'a reply', quoted_id: 'WA_Q', quoted_participant: '5511999999999@s.whatsapp.net', from: customer, instance_id: NUMBER_A });
    expect(byType.get('image:in')).toMatchObject({
      body: 'a photo', sender: { jid: customer, lid: null, name: 'Ana' },
      media: { id: mediaId(1), url: `https://media.test/${mediaId(1)}?sig=fresh`, mime_type: 'image/jpeg', filename: null, size: 2048 },
    });
    expect(byType.get('video:in')).toMatchObject({ body: null, media: { id: mediaId(2), mime_type: 'video/mp4' } });
    expect(byType.get('audio:in')).toMatchObject({ media: { id: mediaId(3) } });
    expect(byType.get('document:in')).toMatchObject({ body: 'terms', media: { filename: 'terms.pdf' } });
    expect(byType.get('sticker:in')).toMatchObject({ media: { id: mediaId(5), mime_type: 'image/webp' } });
    expect(byType.get('location:in')).toMatchObject({ body: 'Paulista', latitude: -23.56, longitude: -46.65 });
    expect(byType.get('contact:in')).toMatchObject({ body: 'Bia' });
    expect(byType.get('reaction:in')).toMatchObject({ body: '👍', quoted_id: 'WA_X' });
    expect(byType.get('poll:in')).toMatchObject({ body: 'Lunch?', poll: { name: 'Lunch?', options: ['yes', 'no'] } });
    expect(byType.get('poll_vote:in')).toMatchObject({ body: 'yes', poll_vote: { poll_message_id: 'WA_POLL', selected: ['yes'] } });
    expect(byType.get('text:out')).toMatchObject({ origin: 'external', body: 'from my phone', from: '5511900000001@s.whatsapp.net', to: customer });
    expect(byType.get('text:out')).not.toHaveProperty('status');

    const [groupMessage] = await history(group);
    expect(groupMessage).toMatchObject({
      group: { jid: group, name: 'Team' }, mentions: ['5511911110005@s.whatsapp.net'], sender: { jid: customer, lid: '4242@lid', name: 'Ana' },
    });
    const groupConversation = (await get<Page<Item>>('/conversations')).data.find((c) => c.jid === group);
    expect(groupConversation).toMatchObject({ is_group: true, name: 'Team', phone: null });
  });

  it('pages history with opaque cursors, newest first, and accepts a phone for its jid', async () => {
    const customer = '5511911110006@s.whatsapp.net';
    await clients.producer.send(
      topics.inboundMessages,
      // Two at the same time: the id breaks the tie, so no page repeats or skips one.
      [0, 1, 2, 3, 3, 4, 5].map((s) => ({ key: NUMBER_A, value: received(NUMBER_A, customer, at(50 + s), text(`m${s}`)) })),
    );
    await settle();
    const everything = await history(customer);
    expect(everything).toHaveLength(7);

    const seen: Item[] = [];
    let url = `/conversations/${encodeURIComponent('+5511911110006')}/messages?limit=3`;
    for (let pages = 1; ; pages++) {
      const page = await get<Page<Item>>(url);
      seen.push(...page.data);
      if (page.next_cursor === null) {
        expect(pages).toBe(3);
        break;
      }
      url = `/conversations/+5511911110006/messages?limit=3&cursor=${page.next_cursor}`;
    }
    expect(seen).toEqual(everything);

    const bad = await app.inject({ method: 'GET', url: `/conversations/${encodeURIComponent(customer)}/messages?cursor=garbage` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_request' });
    const tooMany = await app.inject({ method: 'GET', url: '/conversations?limit=201' });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toMatchObject({ code: 'invalid_request' });
    const unknown = await app.inject({ method: 'GET', url: '/conversations/5511900000000%40s.whatsapp.net/messages' });
    expect(unknown.statusCode).toBe(404);
    const notAJid = await app.inject({ method: 'GET', url: '/conversations/hello/messages' });
    expect(notAJid.statusCode).toBe(400);

    const firstTwo = await get<Page<Item>>('/conversations?limit=2');
    const next = await get<Page<Item>>(`/conversations?limit=2&cursor=${firstTwo.next_cursor}`);
    expect(firstTwo.data).toHaveLength(2);
    expect(next.data.map((c) => c.jid)).not.toContain(firstTwo.data[0]!.jid);
  });

  it('never keeps or shows an OTP code', async () => {
    const customer = '5511911110007@s.whatsapp.net';
    const code = '482913';
    const otp = (body: string) => ({ kind: 'otp' as const, code_masked: '••••13', code_ciphertext: 'sealed-by-the-api', expiry_minutes: 10, body });
    const generated = send(NUMBER_A, customer, at(60), otp('Your verification code expires in 10 minutes.'));
    const written = send(NUMBER_A, customer, at(61), otp(`Use ${code} to sign in`));
    await clients.producer.send(topics.sendCommands, [{ key: NUMBER_A, value: generated }, { key: NUMBER_A, value: written }]);
    await clients.producer.send(topics.messageStatus, [{ key: NUMBER_A, value: fact(written, 'sent', at(62)) }]);
    await settle();

    const items = await history(customer);
    expect(items.map((i) => [i.type, i.body, i.code_masked])).toEqual([
      ['otp', 'Use ••••13 to sign in', '••••13'],
      ['otp', 'Your verification code expires in 10 minutes.', '••••13'],
    ]);
    const responses = [
      JSON.stringify(items),
      (await app.inject({ method: 'GET', url: '/conversations' })).body,
      (await app.inject({ method: 'GET', url: `/conversations?instance_id=${NUMBER_A}` })).body,
    ];
    for (const body of responses) expect(body).not.toContain(code);
    const tables = JSON.stringify(await tableDump('conversations'));
    expect(tables).toContain('••••13');
    expect(tables).not.toContain(code);
    expect(tables).not.toContain('sealed-by-the-api');
  });

  it('documents the routes in OpenAPI', async () => {
    await app.ready();
    const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters?: unknown[] }>> }).paths;
    expect(paths['/conversations']?.get?.responses['200']).toBeDefined();
    expect(paths['/conversations/{jid}/messages']?.get?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'jid', in: 'path' }), expect.objectContaining({ name: 'cursor', in: 'query' })]),
    );
  });

  it('replays into the same tables as the live run', async () => {
    const before = await tableDump('conversations');
    expect(before.messages!.length).toBeGreaterThan(20);
    const result = await replayProjection(clients, conversations('replay'), { deadlineMs: 120_000 });
    expect(result.projection).toBe('conversations');
    await settle();
    expect(await tableDump('conversations')).toEqual(before);
  });
});
