import Fastify from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxChecks } from '../../connectors/sandbox/index.js';
import { contactRoutes } from '../../api/contacts/routes.js';
import { routeContext } from '../support/route-context.js';
import { errorsPlugin } from '../../api/plugins/errors.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import { replayProjection, runProjection, waitUntilCaughtUp, type Projection, type RunningProjection } from '../../processors/index.js';
import { contactId, contactsProjection, optedOut } from '../../processors/contacts/index.js';
import { keywordOptOutEventId } from '../../schemas/contact-ids.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { ContactEvent, InboundMessage, PublicEvent } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, endOffsets, topicName, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { collectTopic } from '../support/topic-collector.js';

const ACCOUNT = asAccountId('acc_contacts');
const PROJECT = asProjectId('prj_contacts');
const NUMBER = asInstanceId('inst_contacts');
const T0 = Date.UTC(2026, 0, 1, 12);

const auth: AuthContext = {
  accountId: ACCOUNT, projectId: PROJECT, keyId: 'key_test', role: 'owner', scopes: ['*'], locale: 'en', plan: 'pro', partnerKey: false,
};

let sequence = 0;
function customerText(phone: string, body: string, overrides: Partial<InboundMessage> = {}): InboundMessage {
  const n = ++sequence;
  const jid = `${phone.slice(1)}@s.whatsapp.net`;
  return {
    event_id: asEventId(`evt_in_${n}`), occurred_at: T0 + n * 1_000, account_id: ACCOUNT, project_id: PROJECT, instance_id: NUMBER,
    origin: 'customer', message_id: asMessageId(`msg_in_${n}`), wa_message_id: `WA_${n}`, chat_jid: jid,
    sender: { jid, lid: null, name: 'Customer', phone: null }, from: jid, to: null, quoted_id: null, quoted_participant: null,
    group: null, mentions: [], content: { kind: 'text', body }, ...overrides,
  };
}

interface ContactItem {
  id: string;
  phone: string;
  name: string | null;
  tags: string[];
  time_zone: string | null;
  opted_out: boolean;
  opted_out_at: string | null;
  opt_out_source: string | null;
}

describe('contacts projection and routes on the real stack', () => {
  let env: TestEnv;
  let clients: Clients;
  let projection: Projection;
  let live: RunningProjection;
  let events: TopicConsumer;
  const published: PublicEvent[] = [];
  let app: Awaited<ReturnType<typeof buildApp>>;

  async function buildApp(withOpenApi = false) {
    const server = Fastify({ ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } } }).withTypeProvider<TypeBoxTypeProvider>();
    if (withOpenApi) await server.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'test', version: '0' } } });
    await server.register(errorsPlugin);
    server.addHook('onRequest', async (request) => {
      request.auth = auth;
    });
    // The network check's route alone: asking a number is tested in number-queries.test.ts.
    await server.register(contactRoutes, { ctx: routeContext(clients), network: { check: async (_project, phones) => sandboxChecks(phones) } });
    return server;
  }

  const topicNames = () => projection.handlers.map((h) => topicName(h.topic, clients.serdes.prefix));
  const settle = () => waitUntilCaughtUp(clients, 'contacts', topicNames(), Date.now() + 60_000);
  const recordsIn = async (topic: { name: string }) =>
    [...(await endOffsets(clients.kafka, topicName(topic, clients.serdes.prefix))).values()].reduce((a, b) => a + b, 0);

  async function request<T>(method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: T; text: string; type: string }> {
    const response = await app.inject({ method, url, payload });
    const type = String(response.headers['content-type']);
    return { status: response.statusCode, body: type.startsWith('application/json') ? response.json<T>() : (undefined as T), text: response.body, type };
  }

  async function contacts(query = ''): Promise<ContactItem[]> {
    const { status, body } = await request<{ data: ContactItem[] }>('GET', `/contacts?limit=200${query}`);
    expect(status).toBe(200);
    return body.data;
  }

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    projection = contactsProjection({ producer: clients.producer, mode: 'live' });
    live = await runProjection(clients, projection);
    events = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.events-reader`, topics: [topics.events], fromBeginning: true });
    await events.run(async (batch) => {
      for (const record of batch.records) if (record.decoded.ok) published.push(record.decoded.value as PublicEvent);
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    app = await buildApp();
  });

  afterAll(async () => {
    await app?.close();
    await events?.stop();
    await live?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('counts an import in dry run and writes nothing', async () => {
    const { status, body } = await request('POST', '/contacts/import', {
      dry_run: true,
      rows: [{ phone: '+5511900000001', name: 'Ana' }, { phone: '+5511900000002' }, { phone: '+55 11 90000-0003', tags: ['vip'] }, { phone: '12345' }],
    });
    expect(status).toBe(200);
    expect(body).toEqual({ dry_run: true, created: 3, updated: 0, unchanged: 0, invalid: 1, invalid_rows: [{ index: 3, phone: '12345', reason: 'invalid_phone', problem: 'missing_country' }] });
    expect(await recordsIn(topics.contacts)).toBe(0);
    await settle();
    expect(await contacts()).toEqual([]);
  });

  it('refuses more than 1000 rows', async () => {
    const rows = Array.from({ length: 1001 }, (_, i) => ({ phone: `+55119${String(i).padStart(8, '0')}` }));
    const { status, body } = await request('POST', '/contacts/import', { rows });
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_request' });
    expect(await recordsIn(topics.contacts)).toBe(0);
  });

  it('imports by phone: creates, then updates what changed and leaves the rest', async () => {
    const first = await request('POST', '/contacts/import', {
      rows: [
        { phone: '+5511900000001', name: 'Ana', tags: ['vip', 'sp'] },
        { phone: '+5511900000002', name: 'Bruno, "B"', tags: ['rj'] },
        { phone: '+5511900000003', name: '=cmd()', tags: ['vip'] },
      ],
    });
    expect(first.body).toMatchObject({ dry_run: false, created: 3, updated: 0, unchanged: 0, invalid: 0 });
    await settle();
    expect((await contacts()).map((c) => c.phone).sort()).toEqual(['+5511900000001', '+5511900000002', '+5511900000003']);

    const dry = await request('POST', '/contacts/import', { dry_run: true, rows: [{ phone: '+55 (11) 90000-0001', name: 'Ana Maria' }, { phone: '+5511900000004' }] });
    expect(dry.body).toMatchObject({ created: 1, updated: 1 });
    const second = await request('POST', '/contacts/import', {
      rows: [{ phone: '+55 (11) 90000-0001', name: 'Ana Maria' }, { phone: '+5511900000002', name: 'Bruno, "B"' }, { phone: '+5511900000004' }],
    });
    expect(second.body).toMatchObject({ created: 1, updated: 1, unchanged: 1, invalid: 0 });
    await settle();
    const all = await contacts();
    expect(all).toHaveLength(4);
    expect(all.find((c) => c.phone === '+5511900000001')).toMatchObject({ id: contactId(ACCOUNT, '+5511900000001'), name: 'Ana Maria', tags: ['vip', 'sp'] });
  });

  it('lists with filters and cursors, and exports the same filters as CSV', async () => {
    expect((await contacts('&tag=vip')).map((c) => c.phone).sort()).toEqual(['+5511900000001', '+5511900000003']);
    expect((await contacts('&q=bruno')).map((c) => c.phone)).toEqual(['+5511900000002']);
    expect((await contacts('&q=0004')).map((c) => c.phone)).toEqual(['+5511900000004']);

    const firstPage = await request<{ data: ContactItem[]; next_cursor: string }>('GET', '/contacts?limit=3');
    const secondPage = await request<{ data: ContactItem[]; next_cursor: string | null }>('GET', `/contacts?limit=3&cursor=${firstPage.body.next_cursor}`);
    expect(secondPage.body.next_cursor).toBeNull();
    expect([...firstPage.body.data, ...secondPage.body.data].map((c) => c.id)).toEqual((await contacts()).map((c) => c.id));
    expect((await request('GET', '/contacts?cursor=nope')).status).toBe(400);

    const csv = await request('GET', '/contacts/export?tag=vip');
    expect(csv.status).toBe(200);
    expect(csv.type).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('id,phone,name,tags,opted_out,opted_out_at,opt_out_source,created_at,updated_at');
    expect(lines.slice(1).map((line) => line.split(',')[1]).sort()).toEqual(['+5511900000001', '+5511900000003']);
    expect(csv.text).toContain(`,'=cmd(),vip,`);
    expect((await request('GET', '/contacts/export?q=bruno')).text).toContain('"Bruno, ""B"""');
    expect((await request('GET', '/contacts/export?opted_out=true')).text.trim().split('\r\n')).toHaveLength(1);
  });

  it('opts out through the API with no public event', async () => {
    const [bruno] = await contacts('&q=bruno');
    const { status, body } = await request<ContactItem>('POST', `/contacts/${bruno!.id}/optout`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: bruno!.id, phone: '+5511900000002', opted_out: true, opt_out_source: 'api' });
    await settle();
    expect(await optedOut(clients.pool, ACCOUNT, '+5511900000002')).toBe(true);
    expect(await optedOut(clients.pool, ACCOUNT, '+5511900000001')).toBe(false);
    expect((await contacts('&opted_out=true')).map((c) => c.phone)).toEqual(['+5511900000002']);
    expect(await recordsIn(topics.events)).toBe(0);

    const again = await request<ContactItem>('POST', `/contacts/${bruno!.id}/optout`);
    expect(again.body.opted_out_at).toBe(body.opted_out_at);
    expect((await request('POST', '/contacts/ct_unknown/optout')).status).toBe(404);
  });

  it('opts a customer out on a keyword and emits exactly one contact.opted_out', async () => {
    const phone = '+5511977776666';
    const stop = customerText(phone, ' Stop! ');
    const again = customerText(phone, 'SAIR');
    await clients.producer.send(topics.inboundMessages, [
      { key: NUMBER, value: customerText(phone, 'please stop') },
      { key: NUMBER, value: customerText('+5511977775555', 'STOP', { group: { jid: '1203@g.us', name: 'G' }, chat_jid: '1203@g.us' }) },
      { key: NUMBER, value: stop },
      { key: NUMBER, value: stop }, // redelivered
      { key: NUMBER, value: again }, // already out: nothing new to announce
    ]);
    await settle();

    expect(await optedOut(clients.pool, ACCOUNT, phone)).toBe(true);
    expect(await optedOut(clients.pool, ACCOUNT, '+5511977775555')).toBe(false);
    const [contact] = await contacts('&q=977776666');
    expect(contact).toMatchObject({ id: contactId(ACCOUNT, phone), name: null, opted_out: true, opt_out_source: 'keyword:inbound' });
    // The latest opt-out by time is the one the contact shows.
    expect(contact!.opted_out_at).toBe(new Date(again.occurred_at).toISOString());

    expect(await recordsIn(topics.events)).toBe(1);
    const [event] = await waitFor('the event to be read back', () => (published.length > 0 ? published : undefined));
    expect(event).toMatchObject({
      event_id: keywordOptOutEventId(stop.event_id), event_type: 'contact.opted_out', scope: 'project',
      account_id: ACCOUNT, project_id: PROJECT, instance_id: NUMBER, sender: stop.sender, trigger: 'scheduled',
    });
    expect(JSON.parse(event!.payload_json)).toEqual({ source: 'keyword:inbound', phone, contact_id: contact!.id });
  });

  it('applies opt-outs and opt-ins by record time, whichever topic they come from', async () => {
    const phone = '+5511966665555';
    const id = contactId(ACCOUNT, phone);
    const optIn: ContactEvent = {
      event_id: asEventId('evt_optin'), occurred_at: T0 + 10_000_000, account_id: ACCOUNT, project_id: null, instance_id: null,
      kind: 'opted_in', contact_id: id, phone, name: 'Late', tags: [], source: 'api', time_zone: null,
    };
    await clients.producer.send(topics.contacts, [{ key: ACCOUNT, value: optIn }]);
    await settle();
    // An older keyword opt-out read after the newer opt-in does not win.
    await clients.producer.send(topics.inboundMessages, [{ key: NUMBER, value: customerText(phone, 'STOP') }]);
    await settle();
    expect(await optedOut(clients.pool, ACCOUNT, phone)).toBe(false);
    expect(await recordsIn(topics.events)).toBe(1);
  });

  it('keeps a contact\'s time zone, on its changelog too, and refuses one that is not an IANA zone with invalid_request, writing nothing', async () => {
    const bad = await request<{ code: string; message: string }>('POST', '/contacts/import', { rows: [{ phone: '+5511900000007' }, { phone: '+5511900000008', time_zone: 'Mars/Olympus' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
    expect(bad.text).toContain('rows/1/time_zone is not an IANA time zone');
    const zoned = await request('POST', '/contacts/import', { rows: [{ phone: '+5511900000007', name: 'Zoned', time_zone: 'Asia/Tokyo' }] });
    expect(zoned.body).toMatchObject({ created: 1, invalid: 0 });
    await settle();
    expect((await contacts()).find((c) => c.phone === '+5511900000007')).toMatchObject({ name: 'Zoned', time_zone: 'Asia/Tokyo' });
    expect((await contacts()).find((c) => c.phone === '+5511900000008')).toBeUndefined();
    const states = await collectTopic(clients, topics.contactStates, `${env.id}.zone-states`);
    try {
      await waitFor('the zoned contact on the changelog', async () => states.values.some((state) => state.phone === '+5511900000007' && state.time_zone === 'Asia/Tokyo'));
    } finally {
      await states.consumer.stop();
    }
  });

  it('replays without announcing anything again', async () => {
    const before = (await clients.pool.query('SELECT * FROM contacts.contacts ORDER BY contact_id')).rows;
    await replayProjection(clients, contactsProjection({ producer: clients.producer, mode: 'replay' }), { deadlineMs: 120_000 });
    await settle();
    expect((await clients.pool.query('SELECT * FROM contacts.contacts ORDER BY contact_id')).rows).toEqual(before);
    expect(await recordsIn(topics.events)).toBe(1);
  });

  it('announces, in a replay, the keyword opt-outs the live projection had not reached', async () => {
    await live.stop();
    const phone = '+5511955554444';
    const stop = customerText(phone, 'UNSUBSCRIBE');
    await clients.producer.send(topics.inboundMessages, [{ key: NUMBER, value: stop }]);
    await replayProjection(clients, contactsProjection({ producer: clients.producer, mode: 'replay' }), { deadlineMs: 120_000 });
    expect(await recordsIn(topics.events)).toBe(2);
    expect(await optedOut(clients.pool, ACCOUNT, phone)).toBe(true);

    // The live runner comes back after the swap and skips what the replay applied: no second event.
    live = await runProjection(clients, projection);
    await settle();
    expect(await recordsIn(topics.events)).toBe(2);
    await waitFor('the event to be read back', () => published.find((e) => e.event_id === keywordOptOutEventId(stop.event_id)));
  });

  it('documents the routes in OpenAPI, the export as CSV', async () => {
    const documented = await buildApp(true);
    try {
      await documented.ready();
      const paths = (documented.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>> }).paths;
      expect(Object.keys(paths).sort()).toEqual(['/contacts', '/contacts/check', '/contacts/export', '/contacts/import', '/contacts/{id}/optout']);
      expect(paths['/contacts/export']?.get?.responses['200']?.content).toHaveProperty('text/csv');
    } finally {
      await documented.close();
    }
  });

  it('checks phones against the (sandbox) network', async () => {
    const { status, body } = await request('POST', '/contacts/check', { phones: ['+5511988887777', '+5511900009999', '98765@lid'] });
    expect(status).toBe(200);
    expect(body).toEqual({
      data: [
        { phone: '+5511988887777', on_network: true, jid: '5511988887777@s.whatsapp.net' },
        { phone: '+5511900009999', on_network: false, jid: null },
        { phone: '98765@lid', on_network: true, jid: '98765@lid', lid: '98765@lid' },
      ],
    });
    expect((await request('POST', '/contacts/check', { phones: ['5511988887777'] })).status).toBe(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => `+55119${String(i).padStart(8, '0')}`);
    expect((await request('POST', '/contacts/check', { phones: tooMany })).status).toBe(400);
  });

  it("checks phones as written, read in the request's country, and refuses an impossible one naming it", async () => {
    const { status, body } = await request('POST', '/contacts/check', { phones: ['(11) 98888-7777', '+44 7400 123456'], country: 'BR' });
    expect(status).toBe(200);
    expect(body).toEqual({
      data: [
        { phone: '(11) 98888-7777', on_network: true, jid: '5511988887777@s.whatsapp.net' },
        { phone: '+44 7400 123456', on_network: true, jid: '447400123456@s.whatsapp.net' },
      ],
    });
    const impossible = await request('POST', '/contacts/check', { phones: ['+5511988887777', '+1 555 000 1111'] });
    expect(impossible.status).toBe(400);
    expect(impossible.body).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('body/phones/1: invalid_for_region') as unknown });
  });

  it('imports the good rows of a list and reports each invalid one with its row and problem', async () => {
    const before = await recordsIn(topics.contacts);
    const { status, body } = await request('POST', '/contacts/import', {
      country: 'BR',
      rows: [
        { phone: '(21) 98888-0001', name: 'Carla' },
        { phone: '+1 555 000 1111' },
        { phone: '07400 123456', country: 'GB', name: 'Dan' },
        { phone: '21 9888' },
        { phone: '+999 1234 5678' },
        { phone: '(21) 98888-0002', country: 'XX' },
        { phone: 'Ana' },
      ],
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      dry_run: false, created: 2, updated: 0, unchanged: 0, invalid: 5,
      invalid_rows: [
        { index: 1, phone: '+1 555 000 1111', reason: 'invalid_phone', problem: 'invalid_for_region' },
        { index: 3, phone: '21 9888', reason: 'invalid_phone', problem: 'too_short' },
        { index: 4, phone: '+999 1234 5678', reason: 'invalid_phone', problem: 'invalid_country_code' },
        { index: 5, phone: '(21) 98888-0002', reason: 'invalid_phone', problem: 'unknown_country' },
        { index: 6, phone: 'Ana', reason: 'invalid_phone', problem: 'not_a_number' },
      ],
    });
    expect(await recordsIn(topics.contacts)).toBe(before + 2);
    await settle();
    const phones = (await contacts()).map((c) => c.phone);
    expect(phones).toEqual(expect.arrayContaining(['+5521988880001', '+447400123456']));
    expect(phones.filter((phone) => phone.startsWith('+1') || phone.startsWith('+999'))).toEqual([]);

    // A country the import names for every row must exist: the request is refused whole, nothing written.
    const unknown = await request('POST', '/contacts/import', { country: 'XX', rows: [{ phone: '(21) 98888-0003' }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('body/country') as unknown });
    expect(await recordsIn(topics.contacts)).toBe(before + 2);
  });
});
