import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { startConnectorRole, type ConnectorRole } from '../../connectors/network/index.js';
import { PendingReceipts, SandboxBehaviours, SandboxNetwork } from '../../connectors/sandbox/index.js';
import type { PublicEvent } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topics, type TopicConsumer } from '../../topics/index.js';
import { otpCodes, testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { collectTopic } from '../support/topic-collector.js';
import { canSignIn } from '../support/sign-in.js';

const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const ANA = '5511988881111@s.whatsapp.net';
const BRUNO = '5511988882222@s.whatsapp.net';
const CAIO = '5511988883333@s.whatsapp.net';

interface GroupBody {
  jid: string;
  subject: string;
  owner: string | null;
  size: number;
  participants?: { jid: string; role: string }[];
}

/**
 * `/groups` end to end on the sandbox: the API asks the number's session through the query channel
 * (`gw.commands.queries` → `gw.numbers.replies`), the sandbox keeps the groups it made; sends to a
 * group jid go through the send routes.
 */
describe('groups through the API, on the sandbox', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let role: ConnectorRole;
  let network: SandboxNetwork;
  let shop: CreatedAccount;
  let other: CreatedAccount;
  let instanceId: string;
  let events: { values: PublicEvent[]; consumer: TopicConsumer };

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown, key = shop.api_key) => {
    const response = await roles.api!.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };
  const connected = (id: string) => async () => {
    const { rows } = await clients.pool.query<{ status: string }>('SELECT status FROM instances.numbers WHERE instance_id = $1', [id]);
    return rows[0]?.status === 'connected' || undefined;
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor'], clients);
    network = new SandboxNetwork({ logger: quiet, receipts: new PendingReceipts(clients.pool), behaviours: new SandboxBehaviours(clients.pool) });
    role = await startConnectorRole(clients, { connectors: [network], otp: otpCodes(clients) });
    events = await collectTopic(clients, topics.events, `${env.id}.events`);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'owner@groups.test', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    other = await createAccount(clients.producer, { name: 'Other', email: 'owner@other-groups.test', plan: 'pro', sandboxNumbers: 1 }, async () => undefined);
    instanceId = shop.instance_ids[0]!;
    await waitFor('the number connected', connected(instanceId), { timeoutMs: 90_000 });
    await roles.api!.directory.until(() => canSignIn(roles.api!.directory, shop.account_id) && canSignIn(roles.api!.directory, other.account_id), 30_000);
  });

  afterAll(async () => {
    await events?.consumer.stop();
    await role?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('creates a group, lists it, reads it, changes its participants, gives its invite link, and sends to it', async () => {
    const created = await call('POST', '/groups', { subject: 'Bakery regulars', participants: ['+5511988881111', BRUNO] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const group = created.body as unknown as GroupBody;
    expect(group.jid).toMatch(/^120363\d+@g\.us$/);
    const own = group.owner!;
    expect(group).toMatchObject({ subject: 'Bakery regulars', size: 3 });
    expect(group.participants).toEqual(expect.arrayContaining([{ jid: own, role: 'superadmin' }, { jid: ANA, role: 'member' }, { jid: BRUNO, role: 'member' }]));
    const joined = await waitFor('group.joined', () => events.values.find((e) => e.event_type === 'group.joined' && e.group?.jid === group.jid));
    expect(joined.group).toEqual({ jid: group.jid, name: 'Bakery regulars' });

    const list = await call('GET', '/groups');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ jid: group.jid, subject: 'Bakery regulars', size: 3 })]);
    expect((list.body.data as GroupBody[])[0]!.participants).toBeUndefined();
    expect(((await call('GET', '/groups?participants=true')).body.data as GroupBody[])[0]!.participants).toHaveLength(3);

    const path = `/groups/${encodeURIComponent(group.jid)}`;
    const added = await call('POST', `${path}/participants`, { action: 'add', participants: [CAIO, ANA] });
    expect(added).toEqual({ status: 200, body: { data: [{ jid: CAIO, status: 'ok' }, { jid: ANA, status: 'conflict' }] } });
    const promoted = await call('POST', `${path}/participants`, { action: 'promote', participants: ['+5511988883333'] });
    expect(promoted.body).toEqual({ data: [{ jid: CAIO, status: 'ok' }] });
    const removed = await call('POST', `${path}/participants`, { action: 'remove', participants: [BRUNO, '5511900000000@s.whatsapp.net'] });
    expect(removed.body).toEqual({ data: [{ jid: BRUNO, status: 'ok' }, { jid: '5511900000000@s.whatsapp.net', status: 'not_found' }] });
    const read = await call('GET', path);
    expect(read.status).toBe(200);
    expect((read.body as unknown as GroupBody).participants).toEqual(expect.arrayContaining([{ jid: CAIO, role: 'admin' }, { jid: ANA, role: 'member' }]));
    expect((read.body as unknown as GroupBody).participants!.map((p) => p.jid)).not.toContain(BRUNO);
    const event = await waitFor('group.participant_promoted', () => events.values.find((e) => e.event_type === 'group.participant_promoted' && e.group?.jid === group.jid));
    expect(JSON.parse(event.payload_json)).toMatchObject({ author: own, participants: [{ jid: CAIO }] });

    const invite = await call('GET', `${path}/invite`);
    expect(invite.status).toBe(200);
    expect(invite.body.link).toBe(`https://chat.whatsapp.com/${invite.body.code as string}`);

    const sent = await call('POST', '/messages/text', { to: group.jid, body: 'Fresh rolls at 7, @Caio', mentions: [CAIO] });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const delivered = await waitFor('the group send', () => network.inspect(instanceId)?.delivered.find((d) => d.message_id === sent.body.message_id));
    expect(delivered).toMatchObject({ to: group.jid, mentions: [CAIO] });
  });

  it('answers spec error codes for bad input, unknown groups, numbers of others, and keys without the scope', async () => {
    const unknownGroup = encodeURIComponent('120363000000000099@g.us');
    expect(await call('GET', `/groups/${unknownGroup}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('POST', `/groups/${unknownGroup}/participants`, { action: 'add', participants: [ANA] })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    for (const [method, url, body] of [
      ['GET', `/groups/${encodeURIComponent(ANA)}`, undefined],
      ['POST', '/groups', { subject: '', participants: [ANA] }],
      ['POST', '/groups', { subject: 'x', participants: [] }],
      ['POST', '/groups', { subject: 'x', participants: ['ana'] }],
      ['POST', `/groups/${unknownGroup}/participants`, { action: 'kick', participants: [ANA] }],
      ['POST', `/groups/${unknownGroup}/participants`, { action: 'add', participants: [ANA, ANA] }],
    ] as const) {
      const answer = await call(method, url, body);
      expect([answer.status, answer.body.code], `${method} ${url} ${JSON.stringify(body)}`).toEqual([400, 'invalid_request']);
    }
    // A number of another project is not found; a project without a connected number cannot ask.
    expect(await call('GET', `/groups?instance_id=${instanceId}`, undefined, other.api_key)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('GET', '/groups', undefined, other.api_key)).toMatchObject({ status: 409, body: { code: 'not_connected' } });
    // A key without the groups scopes.
    const limited = await call('POST', '/keys', { role: 'agent', scopes: ['messages:send'] });
    expect(limited.status).toBe(201);
    const key = limited.body.api_key as string;
    await roles.api!.directory.until(() => canSignIn(roles.api!.directory, shop.account_id, 2), 30_000);
    expect(await call('GET', '/groups', undefined, key)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await call('POST', '/groups', { subject: 'x', participants: [ANA] }, key)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });
});
