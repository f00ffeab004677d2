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
const ANA = '+5511988881111';
const ANA_JID = '5511988881111@s.whatsapp.net';

interface HistoryItem {
  message_id: string;
  wa_message_id: string | null;
  type: string;
  body: string | null;
  status?: string;
  quoted_id?: string;
  mentions: string[];
  edited_at?: string;
  deleted_at?: string;
}

/**
 * Edits and deletions both ways, end to end on the sandbox: the API's sends of `edit` and `delete`
 * go through the log to the number's session; a customer's edits and deletions become
 * `message.edited` / `message.deleted` and change the conversation history.
 */
describe('edits and deletions through the API, on the sandbox', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let role: ConnectorRole;
  let network: SandboxNetwork;
  let shop: CreatedAccount;
  let instanceId: string;
  let events: { values: PublicEvent[]; consumer: TopicConsumer };

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await roles.api!.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${shop.api_key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };

  const history = async (jid: string) => (await call('GET', `/conversations/${encodeURIComponent(jid)}/messages`)).body.data as HistoryItem[] | undefined;
  const item = (jid: string, test: (m: HistoryItem) => boolean) => waitFor(`a history item of ${jid}`, async () => (await history(jid))?.find(test));

  /** Sends a text and waits until the network took it: its network id. */
  const sent = async (body: string): Promise<string> => {
    const { status, body: accepted } = await call('POST', '/messages/text', { to: ANA, body, instance_id: instanceId });
    expect(status, JSON.stringify(accepted)).toBe(202);
    const row = await item(ANA_JID, (m) => m.message_id === accepted.message_id && m.wa_message_id !== null);
    return row.wa_message_id!;
  };

  const customerWrites = async (content: object): Promise<string> => {
    const { status, body } = await call('POST', `/sandbox/instances/${instanceId}/customer-messages`, { from: ANA, name: 'Ana', content });
    expect(status, JSON.stringify(body)).toBe(202);
    return body.wa_message_id as string;
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor'], clients);
    network = new SandboxNetwork({ logger: quiet, receipts: new PendingReceipts(clients.pool), behaviours: new SandboxBehaviours(clients.pool) });
    role = await startConnectorRole(clients, { connectors: [network], otp: otpCodes(clients) });
    events = await collectTopic(clients, topics.events, `${env.id}.events`);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'owner@changes.test', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    instanceId = shop.instance_ids[0]!;
    await waitFor('the number connected', async () => {
      const { rows } = await clients.pool.query<{ status: string }>('SELECT status FROM instances.numbers WHERE instance_id = $1', [instanceId]);
      return rows[0]?.status === 'connected' || undefined;
    }, { timeoutMs: 90_000 });
    await roles.api!.directory.until(() => canSignIn(roles.api!.directory, shop.account_id), 30_000);
  });

  afterAll(async () => {
    await events?.consumer.stop();
    await role?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('edits and deletes our own sends: the session gets the commands, the history shows the change', async () => {
    const edited = await sent('Your order ships tomorow');
    const gone = await sent('Wrong chat, sorry');

    const edit = await call('POST', '/messages/edit', { to: ANA, quoted_message_id: edited, body: 'Your order ships tomorrow', instance_id: instanceId });
    expect(edit.status, JSON.stringify(edit.body)).toBe(202);
    expect(edit.body).toMatchObject({ status: 'queued' });
    const removal = await call('POST', '/messages/delete', { to: ANA, quoted_message_id: gone, instance_id: instanceId });
    expect(removal.status).toBe(202);

    const delivered = await waitFor('both changes delivered', () => {
      const sends = network.inspect(instanceId)?.delivered ?? [];
      const changes = sends.filter((d) => d.content.kind === 'edit' || d.content.kind === 'delete');
      return changes.length === 2 ? changes : undefined;
    });
    expect(delivered.map((d) => d.content)).toEqual([
      { kind: 'edit', quoted_message_id: edited, body: 'Your order ships tomorrow' },
      { kind: 'delete', quoted_message_id: gone },
    ]);
    const changedRow = await item(ANA_JID, (m) => m.wa_message_id === edited && m.edited_at !== undefined);
    expect(changedRow).toMatchObject({ type: 'text', body: 'Your order ships tomorrow' });
    const deletedRow = await item(ANA_JID, (m) => m.wa_message_id === gone && m.deleted_at !== undefined);
    expect(deletedRow.body).toBeNull();
    // The edit and the deletion are no messages of their own in the history.
    expect((await history(ANA_JID))!.map((m) => m.type)).not.toContain('edit');
  });

  it("refuses a change of a message that is not the number's own: the send fails, the history keeps the message", async () => {
    const hers = await customerWrites({ type: 'text', body: 'hello shop' });
    const edit = await call('POST', '/messages/edit', { to: ANA, quoted_message_id: hers, body: 'rewritten', instance_id: instanceId });
    expect(edit.status).toBe(202);
    // The edit has no history item of its own: its failure is its message.failed event.
    const event = await waitFor('message.failed of the edit', () => events.values.find((e) => e.event_type === 'message.failed' && e.payload_json.includes(edit.body.message_id as string)));
    expect(JSON.parse(event.payload_json)).toMatchObject({ error_code: 'delivery_failed' });
    // The history applies the edit's failed status after the event may have gone out: it settles unchanged.
    const kept = await item(ANA_JID, (m) => m.wa_message_id === hers && m.body === 'hello shop' && m.edited_at === undefined);
    expect(kept).toMatchObject({ body: 'hello shop' });
    expect(kept.edited_at).toBeUndefined();
  });

  it("turns a customer's edit and deletion into message.edited and message.deleted, and changes the history", async () => {
    const typo = await customerWrites({ type: 'text', body: 'I want 3 bred rolls' });
    const regret = await customerWrites({ type: 'text', body: 'my card number is 1234' });
    await customerWrites({ type: 'edit', quoted_message_id: typo, body: 'I want 3 bread rolls' });
    await customerWrites({ type: 'delete', quoted_message_id: regret });

    const edited = await waitFor('message.edited', () => events.values.find((e) => e.event_type === 'message.edited' && e.instance_id === instanceId));
    const { message_id: changeId, ...payload } = JSON.parse(edited.payload_json) as Record<string, unknown>;
    expect(payload).toEqual({ origin: 'customer', wa_message_id: typo, from: ANA_JID, chat: ANA_JID, body: 'I want 3 bread rolls', quoted_participant: ANA_JID });
    expect(changeId).toMatch(/^msg_/);
    expect(edited.sender).toMatchObject({ jid: ANA_JID, name: 'Ana' });
    const deleted = await waitFor('message.deleted', () => events.values.find((e) => e.event_type === 'message.deleted' && e.instance_id === instanceId));
    expect(JSON.parse(deleted.payload_json)).toMatchObject({ origin: 'customer', wa_message_id: regret, from: ANA_JID });

    expect(await item(ANA_JID, (m) => m.wa_message_id === typo && m.edited_at !== undefined)).toMatchObject({ body: 'I want 3 bread rolls' });
    expect(await item(ANA_JID, (m) => m.wa_message_id === regret && m.deleted_at !== undefined)).toMatchObject({ body: null });
  });

  it('sends a reply with mentions: the session gets them on the first bubble, the history shows them', async () => {
    const question = await customerWrites({ type: 'text', body: 'do you have rye bread?' });
    const reply = await call('POST', '/messages/text', {
      to: ANA,
      body: 'Yes! @Bruno will set one aside',
      quoted_message_id: question,
      mentions: ['+5511977772222', '123456789012345@lid'],
      instance_id: instanceId,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    const mentions = ['5511977772222@s.whatsapp.net', '123456789012345@lid'];
    const delivered = await waitFor('the reply delivered', () => network.inspect(instanceId)?.delivered.find((d) => d.message_id === reply.body.message_id));
    expect(delivered).toMatchObject({ quoted_message_id: question, mentions, content: { kind: 'text', body: 'Yes! @Bruno will set one aside' } });
    expect(await item(ANA_JID, (m) => m.message_id === reply.body.message_id)).toMatchObject({ quoted_id: question, mentions });

    // Any send with content of its own may reply; a reaction names its message in its content only.
    const poll = await call('POST', '/messages/poll', { to: ANA, name: 'Sliced?', options: ['yes', 'no'], quoted_message_id: question, instance_id: instanceId });
    expect(poll.status).toBe(202);
    expect(await waitFor('the poll delivered', () => network.inspect(instanceId)?.delivered.find((d) => d.message_id === poll.body.message_id))).toMatchObject({ quoted_message_id: question, mentions: [] });
    const reaction = await call('POST', '/messages/reaction', { to: ANA, quoted_message_id: question, emoji: '👍', instance_id: instanceId });
    expect(await waitFor('the reaction delivered', () => network.inspect(instanceId)?.delivered.find((d) => d.message_id === reaction.body.message_id))).toMatchObject({ quoted_message_id: null });
  });

  it('answers 400 invalid_request for a bad reply or mention, and for a reply on sends that take none', async () => {
    for (const [path, body] of [
      ['/messages/text', { to: ANA, body: 'x', mentions: ['bruno'] }],
      ['/messages/text', { to: ANA, body: 'x', mentions: ['+5511977772222', '+5511977772222'] }],
      ['/messages/text', { to: ANA, body: 'x', mentions: '+5511977772222' }],
      ['/messages/text', { to: ANA, body: 'x', quoted_message_id: '' }],
      ['/messages/otp', { to: ANA, code: '123456', quoted_message_id: 'W1' }],
      ['/messages/edit', { to: ANA, quoted_message_id: 'W1', body: 'x', mentions: [ANA] }],
    ] as const) {
      const answer = await call('POST', path, body);
      expect([answer.status, answer.body.code], `${path} ${JSON.stringify(body)}`).toEqual([400, 'invalid_request']);
    }
  });

  it('answers 400 invalid_request for an edit without text or target, and a deletion without target', async () => {
    for (const [path, body] of [
      ['/messages/edit', { to: ANA, quoted_message_id: 'X' }],
      ['/messages/edit', { to: ANA, body: 'new text' }],
      ['/messages/edit', { to: ANA, quoted_message_id: 'X', body: '' }],
      ['/messages/delete', { to: ANA }],
      ['/messages/delete', { to: ANA, quoted_message_id: '' }],
      ['/messages/delete', { to: ANA, quoted_message_id: 'X', body: 'extra' }],
    ] as const) {
      const answer = await call('POST', path, body);
      expect([answer.status, answer.body.code], `${path} ${JSON.stringify(body)}`).toEqual([400, 'invalid_request']);
    }
  });
});
