import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { envelopeOf } from '../../events/envelope.js';
import { instanceStatusEventId } from '../../events/renderers/index.js';
import { eventsProjection } from '../../processors/events/index.js';
import { runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { GroupEvent, InboundMessage, InstanceState, MessageStatus, PairingChallenge, PublicEvent } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { createConsumer, endOffsets, topicName, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { canSignIn } from '../support/sign-in.js';

interface Read {
  readonly key: string | null;
  readonly event: PublicEvent;
}

const factTopics = [topics.inboundMessages, topics.messageStatus, topics.instances, topics.pairing, topics.groups];
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const ana = { jid: '5511988887777@s.whatsapp.net', lid: '123456789012345@lid', name: 'Ana', phone: '+5511988887777' };
const own = { jid: '5511955550000@s.whatsapp.net', lid: null, name: 'Shop', phone: '+5511955550000' };
const photo = { id: '0b9f3c1e-8a55-4a43-9d5a-2f0c1d6b7a10', mime_type: 'image/jpeg', filename: 'p.jpg', size: 2048, storage_key: 'media/0b9f', sha256: 'ab' };

describe('events projection on the real stack: facts become public events on gw.events', () => {
  let env: TestEnv;
  let clients: Clients;
  let projection: RunningProjection | undefined;
  let rerun: RunningProjection | undefined;
  let processor: GatewayProcess | undefined;
  let sequence = 0;

  const number = (project: string) => ({
    account_id: asAccountId(`acc_${env.id}`),
    project_id: asProjectId(`prj_${env.id}_${project}`),
    instance_id: asInstanceId(`inst_${env.id}_${project}`),
  });
  const nextId = (kind: string) => asEventId(`evt_${kind}_${env.id}_${++sequence}`);

  function inbound(project: string, overrides: Partial<InboundMessage>): InboundMessage {
    const n = ++sequence;
    return {
      ...number(project),
      event_id: nextId('in'),
      occurred_at: T0 + n,
      origin: 'customer',
      message_id: asMessageId(`msg_${env.id}_${n}`),
      wa_message_id: `WA${n}`,
      chat_jid: ana.jid,
      sender: ana,
      from: ana.jid,
      to: null,
      quoted_id: null,
      quoted_participant: null,
      group: null,
      mentions: [],
      content: { kind: 'text', body: 'Hi' },
      ...overrides,
    };
  }

  function status(project: string, value: MessageStatus['status'], overrides: Partial<MessageStatus> = {}): MessageStatus {
    return {
      ...number(project),
      event_id: nextId('st'),
      occurred_at: T0,
      message_id: asMessageId(`msg_${env.id}_sent`),
      wa_message_id: 'WASENT',
      client_reference: 'order-1',
      campaign_id: null,
      to: ana.jid,
      status: value,
      error_code: value === 'failed' ? 'not_connected' : null,
      error_reason: value === 'failed' ? 'socket closed' : null,
      ...overrides,
    };
  }

  function state(project: string, overrides: Partial<InstanceState>): InstanceState {
    return {
      ...number(project),
      event_id: nextId('state'),
      occurred_at: T0,
      phone: own.phone,
      nickname: 'Sales',
      status: 'connected',
      previous_status: null,
      reason: null,
      health_score: 100,
      pool_ids: [],
      connector: 'sandbox',
      deleted: false,
      ...overrides,
    };
  }

  const pairing = (project: string, method: PairingChallenge['method'], value: string): PairingChallenge => ({
    ...number(project),
    event_id: nextId('pair'),
    occurred_at: T0,
    method,
    value,
    expires_at: T0 + 60_000,
  });

  const groupFact = (project: string, overrides: Partial<GroupEvent>): GroupEvent => ({
    ...number(project),
    event_id: nextId('grp'),
    occurred_at: T0,
    kind: 'joined',
    group: { jid: '120363000000000001@g.us', name: 'Team' },
    author: ana.jid,
    participants: [],
    subject: null,
    description: null,
    ...overrides,
  });

  /** Every event gw.events holds now, with its record key. */
  async function readEvents(): Promise<Read[]> {
    const topic = topicName(topics.events, clients.serdes.prefix);
    const ends = await endOffsets(clients.kafka, topic);
    const position = new Map<number, number>();
    const read: Read[] = [];
    const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.reader.${++sequence}`, topics: [topics.events], fromBeginning: true });
    await consumer.run(async (batch) => {
      for (const record of batch.records) {
        if (record.decoded.ok && record.decoded.value !== null) read.push({ key: record.key, event: record.decoded.value as PublicEvent });
        position.set(batch.partition, record.offset + 1);
      }
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    try {
      await waitFor(`${topic} read to its end`, () => [...ends].every(([partition, end]) => (position.get(partition) ?? 0) >= end));
    } finally {
      await consumer.stop();
    }
    return read;
  }

  const caughtUp = (schema: string) =>
    waitUntilCaughtUp(clients, schema, factTopics.map((spec) => topicName(spec, clients.serdes.prefix)), Date.now() + 60_000);

  const payloadOf = (event: PublicEvent) => JSON.parse(event.payload_json) as Record<string, unknown>;

  const facts = {} as {
    text: InboundMessage;
    image: InboundMessage;
    inGroup: InboundMessage;
    external: InboundMessage;
    otherProject: InboundMessage;
    statuses: MessageStatus[];
    connected: InstanceState;
    connecting: InstanceState;
    unchanged: InstanceState;
    deleted: InstanceState;
    qr: PairingChallenge;
    code: PairingChallenge;
    added: GroupEvent;
    subject: GroupEvent;
  };

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    processor?.kill('SIGKILL');
    await processor?.exited;
    await rerun?.stop();
    await projection?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('renders each kind of fact, keyed by project, under the fact ids; no change announces nothing', async () => {
    Object.assign(facts, {
      text: inbound('a', { quoted_id: 'WA0', quoted_participant: own.jid }),
      image: inbound('a', { content: { kind: 'image', media: photo, caption: 'Look' } }),
      inGroup: inbound('a', {
        chat_jid: '120363000000000001@g.us',
        from: '120363000000000001@g.us',
        group: { jid: '120363000000000001@g.us', name: 'Team' },
        mentions: [own.jid],
      }),
      external: inbound('a', { origin: 'external', sender: own, from: own.jid, to: ana.jid, content: { kind: 'document', media: photo, caption: 'Receipt' } }),
      otherProject: inbound('b', {}),
      statuses: [status('a', 'sent'), status('a', 'delivered'), status('a', 'read'), status('b', 'failed', { wa_message_id: null, client_reference: null })],
      connected: state('a', { status: 'connected', previous_status: 'connecting' }),
      connecting: state('a', { status: 'connecting', previous_status: 'disconnected', reason: 'reconnecting' }),
      unchanged: state('a', { nickname: 'Renamed' }),
      deleted: state('a', { status: 'disconnected', previous_status: 'connected', deleted: true }),
      qr: pairing('a', 'qr', '2@qrpayload'),
      code: pairing('a', 'code', 'ABCD-EFGH'),
      added: groupFact('a', { kind: 'participant_added', participants: [{ ...own, lid: '999@lid' }] }),
      subject: groupFact('b', { kind: 'subject_changed', subject: 'New name' }),
    });
    const keyed = <V extends { instance_id: string }>(values: V[]) => values.map((value) => ({ key: value.instance_id, value }));
    await clients.producer.send(topics.inboundMessages, keyed([facts.text, facts.image, facts.inGroup, facts.external, facts.otherProject]));
    await clients.producer.send(topics.messageStatus, keyed(facts.statuses));
    await clients.producer.send(topics.instances, [
      ...keyed([facts.unchanged, facts.connected, facts.connecting, facts.deleted]),
      { key: `inst_${env.id}_gone`, value: null },
    ]);
    await clients.producer.send(topics.pairing, keyed([facts.qr, facts.code]));
    await clients.producer.send(topics.groups, keyed([facts.added, facts.subject]));

    projection = await runProjection(clients, eventsProjection(clients));
    await caughtUp('events');
    const read = await readEvents();

    const expected: Array<[string, string, string]> = [
      [facts.text.event_id, 'message.received', 'a'],
      [facts.image.event_id, 'message.received', 'a'],
      [facts.inGroup.event_id, 'message.received', 'a'],
      [facts.external.event_id, 'message.sent', 'a'],
      [facts.otherProject.event_id, 'message.received', 'b'],
      [facts.statuses[0]!.event_id, 'message.sent', 'a'],
      [facts.statuses[1]!.event_id, 'message.delivered', 'a'],
      [facts.statuses[2]!.event_id, 'message.read', 'a'],
      [facts.statuses[3]!.event_id, 'message.failed', 'b'],
      [facts.connected.event_id, 'instance.connected', 'a'],
      [instanceStatusEventId(facts.connected.event_id), 'instance.status', 'a'],
      [instanceStatusEventId(facts.connecting.event_id), 'instance.status', 'a'],
      [facts.qr.event_id, 'qr_code', 'a'],
      [facts.code.event_id, 'pairing_code', 'a'],
      [facts.added.event_id, 'group.participant_added', 'a'],
      [facts.subject.event_id, 'group.subject_changed', 'b'],
    ];
    const sortById = <T extends readonly string[]>(rows: T[]) => [...rows].sort((x, y) => x[0]!.localeCompare(y[0]!));
    expect(sortById(read.map(({ key, event }) => [event.event_id, event.event_type, key === number('a').project_id ? 'a' : key === number('b').project_id ? 'b' : String(key)]))).toEqual(
      sortById(expected),
    );
    expect(read.every(({ key, event }) => key === event.project_id && event.trigger === 'scheduled' && event.scope === 'project')).toBe(true);

    const byId = new Map(read.map(({ event }) => [event.event_id as string, event]));
    const text = envelopeOf(byId.get(facts.text.event_id)!);
    expect(text).toMatchObject({ instance_id: number('a').instance_id, sender: { jid: ana.jid, lid: ana.lid, name: 'Ana' } });
    expect(text.payload).toEqual({ type: 'text', message_id: facts.text.message_id, wa_message_id: facts.text.wa_message_id, from: ana.jid, body: 'Hi', quoted_id: 'WA0', quoted_participant: own.jid });

    const image = payloadOf(byId.get(facts.image.event_id)!) as { media: { id: string; url: string } };
    const link = new URL(image.media.url);
    expect(link.pathname).toBe(`/media/${photo.id}`);
    expect(clients.mediaLinks.verify(photo.id, Number(link.searchParams.get('exp')), link.searchParams.get('sig')!)).toBe(true);

    expect(envelopeOf(byId.get(facts.inGroup.event_id)!)).toMatchObject({ group: { jid: '120363000000000001@g.us', name: 'Team' }, mentions: [own.jid] });
    expect(payloadOf(byId.get(facts.external.event_id)!)).toMatchObject({ origin: 'external', type: 'document', to: ana.jid, body: 'Receipt', media: { ref: `/media/${photo.id}` } });
    expect(envelopeOf(byId.get(facts.statuses[0]!.event_id)!).client_reference).toBe('order-1');
    expect(payloadOf(byId.get(facts.statuses[3]!.event_id)!)).toEqual({
      origin: 'api', message_id: `msg_${env.id}_sent`, wa_message_id: null, to: ana.jid, status: 'failed', error_code: 'not_connected',
    });
    expect(byId.get(facts.statuses[3]!.event_id)!.payload_json).not.toContain('socket closed');
    expect(payloadOf(byId.get(facts.connected.event_id)!)).toEqual({ status: 'connected', previous_status: 'connecting', phone: own.phone, nickname: 'Sales', reason: null, health_score: 100 });
    expect(payloadOf(byId.get(instanceStatusEventId(facts.connecting.event_id))!)).toEqual({
      instance_id: number('a').instance_id, status: 'connecting', previous_status: 'disconnected', phone: own.phone, reason: 'reconnecting',
    });
    expect(payloadOf(byId.get(facts.qr.event_id)!)).toEqual({ instance_id: number('a').instance_id, qr_code: '2@qrpayload', expires_at: new Date(T0 + 60_000).toISOString() });
    expect(payloadOf(byId.get(facts.added.event_id)!)).toEqual({ author: ana.jid, participants: [{ jid: own.jid, lid: '999@lid', name: 'Shop' }] });
  });

  it('re-processing the same facts yields the same event ids and bodies (at least once, de-duplicable)', async () => {
    const before = await readEvents();
    rerun = await runProjection(clients, eventsProjection(clients), { schema: 'events_rerun', groupId: `${clients.serdes.prefix}processor.events.rerun` });
    await caughtUp('events_rerun');
    const after = await readEvents();
    expect(after).toHaveLength(before.length * 2);
    // Media links are signed when rendered: only their expiry may differ.
    const comparable = ({ key, event }: Read) => JSON.stringify({ key, ...envelopeOf(event) }).replace(/\?exp=\d+&sig=[\w-]+/g, '');
    const counts = new Map<string, number>();
    for (const read of after) counts.set(comparable(read), (counts.get(comparable(read)) ?? 0) + 1);
    expect([...counts.values()].every((count) => count === 2)).toBe(true);
    expect(new Set(counts.keys())).toEqual(new Set(before.map(comparable)));
  });

  it('runs in the processor role, continuing from the stored offsets, and publishes advisories from the CLI', async () => {
    await projection?.stop();
    projection = undefined;
    await rerun?.stop();
    rerun = undefined;
    const before = await readEvents();
    processor = spawnGateway(['processor'], env.env);
    const fresh = inbound('a', { content: { kind: 'text', body: 'After the restart' } });
    await clients.producer.send(topics.inboundMessages, [{ key: fresh.instance_id, value: fresh }]);
    const after = await waitFor('the processor role to announce the new message', async () => {
      processor!.assertRunning();
      const read = await readEvents();
      return read.some(({ event }) => event.event_id === fresh.event_id) && read;
    }, { timeoutMs: 90_000 });
    // Nothing announced twice: the role took over where the in-process run stopped.
    expect(after.map(({ event }) => event.event_id).sort()).toEqual([...before.map(({ event }) => event.event_id), fresh.event_id].sort());

    const noop = async () => undefined;
    const first = await createAccount(clients.producer, { name: 'First', email: 'first@example.test' }, noop);
    const second = await createAccount(clients.producer, { name: 'Second', email: 'second@example.test' }, noop);
    const cli = spawnGateway(
      ['advisories', 'publish', '--account', first.account_id, '--account', second.account_id, '--title', 'TLS 1.0 ends',
        '--impact', 'Clients on TLS 1.0 fail', '--action', 'Upgrade your HTTP client', '--link', 'https://example.test/advisories/tls'],
      env.env,
    );
    expect(await cli.exited, cli.output()).toBe(0);
    const published = JSON.parse(cli.stdout().trim().split('\n').pop()!) as { advisory_id: string; events: Array<{ account_id: string; event_id: string }> };
    expect(published.advisory_id).toMatch(/^adv_/);
    const advisories = (await readEvents()).filter(({ event }) => event.event_type === 'advisory.published');
    expect(advisories.map(({ key, event }) => [key, event.account_id, event.project_id, event.instance_id, event.scope]).sort()).toEqual(
      [first.account_id, second.account_id].sort().map((id) => [id, id, null, null, 'account']),
    );
    expect(advisories.map(({ event }) => event.event_id).sort()).toEqual(published.events.map((e) => e.event_id).sort());
    expect(payloadOf(advisories[0]!.event)).toMatchObject({
      advisory_id: published.advisory_id, title: 'TLS 1.0 ends', impact: 'Clients on TLS 1.0 fail', action: 'Upgrade your HTTP client', link: 'https://example.test/advisories/tls',
    });

    const unknown = spawnGateway(['advisories', 'publish', '--account', newId('acc'), '--title', 't', '--impact', 'i', '--action', 'a', '--link', 'https://x.test'], env.env);
    expect(await unknown.exited).toBe(1);
    expect(unknown.output()).toMatch(/unknown account acc_/);
  });
});

// The smallest valid PNG: a 1x1 transparent pixel.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
const OTP = '739251';

/** The real path: the sandbox network writes the facts, the processor role announces them. */
describe('events from the sandbox network, through the api, connector and processor roles', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  let reader: TopicConsumer;
  const events: PublicEvent[] = [];

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await roles.api!.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };
  const sandbox = async (instance: string, path: string, body: unknown) => {
    const response = await call('POST', `/sandbox/instances/${instance}/${path}`, body);
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    return response.body;
  };
  const event = (what: string, match: (e: PublicEvent) => boolean) => waitFor(what, () => events.find(match), { timeoutMs: 30_000 });
  const payloadOf = (e: PublicEvent) => JSON.parse(e.payload_json) as Record<string, unknown>;

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    account = await createAccount(clients.producer, { name: 'Shop', email: 'owner@shop.test', plan: 'pro' }, connectSandboxNumbers(clients.producer));
    await roles.api!.directory.until(() => canSignIn(roles.api!.directory, account.account_id), 30_000);
    reader = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.events.reader`, topics: [topics.events], fromBeginning: true });
    await reader.run(async (batch) => {
      for (const record of batch.records) if (record.decoded.ok && record.decoded.value !== null) events.push(record.decoded.value as PublicEvent);
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
  });

  afterAll(async () => {
    await reader?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('pairs, receives, sends and changes groups: each becomes its event, and the OTP code never appears', async () => {
    const created = await call('POST', '/instances', { nickname: 'Sales' });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const instance = created.body.id as string;
    await waitFor('the new number listed', async () => {
      const listed = await call('GET', '/instances');
      return (listed.body.data as Array<{ id: string }> | undefined)?.some((n) => n.id === instance);
    });

    await sandbox(instance, 'connect', { method: 'qr' });
    const qr = await event('qr_code', (e) => e.event_type === 'qr_code' && e.instance_id === instance);
    expect(qr.project_id).toBe(account.project_id);
    expect(Object.keys(payloadOf(qr))).toEqual(['instance_id', 'qr_code', 'expires_at']);

    await sandbox(instance, 'scan', { phone: '+5511955550000' });
    const connected = await event('instance.connected', (e) => e.event_type === 'instance.connected' && e.instance_id === instance);
    expect(payloadOf(connected)).toMatchObject({ status: 'connected', phone: '+5511955550000', nickname: 'Sales' });
    await event('instance.status connected', (e) => e.event_type === 'instance.status' && payloadOf(e).status === 'connected');

    const image = await sandbox(instance, 'customer-messages', {
      from: '+5511988887777', name: 'Ana', content: { type: 'image', media: { base64: PNG.toString('base64'), mimetype: 'image/png' }, caption: 'Look' },
    });
    const received = await event('message.received', (e) => e.event_type === 'message.received' && payloadOf(e).wa_message_id === image.wa_message_id);
    expect(received).toMatchObject({ project_id: account.project_id, instance_id: instance, sender: { jid: '5511988887777@s.whatsapp.net', name: 'Ana' } });
    const media = payloadOf(received).media as { id: string; url: string; mime_type: string; size: number };
    expect(media).toMatchObject({ mime_type: 'image/png', size: PNG.length });
    const link = new URL(media.url);
    const fetched = await roles.api!.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect([200, 302]).toContain(fetched.statusCode);

    const otp = await call('POST', '/messages/otp', { to: '+5511988887777', code: OTP, client_reference: 'login-1' });
    expect(otp.status, JSON.stringify(otp.body)).toBe(202);
    const statuses = ['message.sent', 'message.delivered', 'message.read'];
    for (const type of statuses) {
      const status = await event(type, (e) => e.event_type === type && payloadOf(e).message_id === otp.body.message_id);
      expect(status.client_reference).toBe('login-1');
    }

    await sandbox(instance, 'phone-messages', { to: '+5511988887777', content: { type: 'text', body: 'On my way' } });
    const external = await event('message.sent external', (e) => e.event_type === 'message.sent' && payloadOf(e).origin === 'external');
    expect(payloadOf(external)).toMatchObject({ type: 'text', to: '5511988887777@s.whatsapp.net', body: 'On my way' });

    await sandbox(instance, 'group-events', {
      change: 'participant_added', group: { jid: '120363000000000009@g.us', name: 'Team' }, author: '+5511988887777', participants: ['+5511911112222'],
    });
    const added = await event('group.participant_added', (e) => e.event_type === 'group.participant_added');
    expect(added.group).toEqual({ jid: '120363000000000009@g.us', name: 'Team' });
    expect(payloadOf(added)).toMatchObject({ author: '5511988887777@s.whatsapp.net', participants: [{ jid: '5511911112222@s.whatsapp.net' }] });

    await sandbox(instance, 'status', { status: 'disconnected', reason: 'phone offline' });
    const disconnected = await event('instance.disconnected', (e) => e.event_type === 'instance.disconnected');
    expect(payloadOf(disconnected)).toMatchObject({ status: 'disconnected', previous_status: 'connected', reason: 'phone offline' });

    expect(events.every((e) => e.project_id === account.project_id)).toBe(true);
    expect(events.filter((e) => JSON.stringify(e).includes(OTP))).toEqual([]);
  });
});
