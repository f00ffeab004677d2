import { createHash, randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnectorRole, type ConnectorRole, type MediaOwner, type MediaSink } from '../../connectors/network/index.js';
import { phoneJid } from '../../schemas/phones.js';
import { simulatedWaId } from '../../connectors/sandbox/ids.js';
import { sentNetworkId } from '../../connectors/network/ids.js';
import { PendingReceipts, SandboxBehaviours, SandboxNetwork } from '../../connectors/sandbox/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { InboundMessage, InstanceState, MessageStatus, SandboxCommand, SendCommand } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, topics, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { otpCodes, testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const account = asAccountId('acc_sandbox');
const project = asProjectId('prj_sandbox');
const customer = '+5511987650001';
const cipher = createCipher('sandbox-test-key');
const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

type CustomerMessage = Extract<SandboxCommand['control'], { kind: 'customer_message' }>;
type MediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

function file(media_type: MediaType, extra: { data?: Buffer; filename?: string; caption?: string; ptt?: boolean } = {}): CustomerMessage['content'] {
  return {
    kind: 'media',
    media_type,
    data: extra.data ?? null,
    mime_type: null,
    filename: extra.filename ?? null,
    caption: extra.caption ?? null,
    ptt: extra.ptt ?? false,
  };
}

interface Seen<V> {
  readonly value: V;
  readonly partition: number;
}

/** Everything the connector writes, read back from the log as any consumer would. */
class Log {
  private readonly seen = new Map<string, Seen<unknown>[]>();
  private consumer?: TopicConsumer;

  async start(clients: Clients, groupId: string): Promise<void> {
    const read = [topics.instances, topics.pairing, topics.messageStatus, topics.inboundMessages, topics.groups];
    this.consumer = await createConsumer(clients.kafka, clients.serdes, { groupId, topics: read, fromBeginning: true });
    await this.consumer.run(async (batch) => {
      const list = this.seen.get(batch.topic) ?? [];
      this.seen.set(batch.topic, list);
      for (const record of batch.records) if (record.decoded.ok && record.decoded.value) list.push({ value: record.decoded.value, partition: record.partition });
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
  }

  of<V>(spec: TopicSpec<V>, prefix: string): Seen<V>[] {
    return (this.seen.get(`${prefix}${spec.name}`) ?? []) as Seen<V>[];
  }

  /** Every record read so far, as text: to prove a secret never reached the log. */
  text(): string {
    return JSON.stringify([...this.seen.values()], (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  }

  stop(): Promise<void> {
    return this.consumer?.stop() ?? Promise.resolve();
  }
}

/** Stores media in memory: the S3 sink is another module's job. */
function memoryMedia(): MediaSink & { readonly files: Map<string, { bytes: Buffer; owner: MediaOwner }> } {
  const files = new Map<string, { bytes: Buffer; owner: MediaOwner }>();
  return {
    files,
    async store(bytes, mime, filename, owner) {
      const id = randomUUID();
      files.set(id, { bytes, owner });
      return { id, mime_type: mime, filename: filename ?? null, size: bytes.length, storage_key: `media/${id}`, sha256: createHash('sha256').update(bytes).digest('hex') };
    },
  };
}

describe('the connector role with the sandbox network, on the real stack', () => {
  let env: TestEnv;
  let clients: Clients;
  const log = new Log();
  const media = memoryMedia();
  let sandbox: SandboxNetwork;
  let role: ConnectorRole;

  const states = (id: string) => log.of<InstanceState>(topics.instances, clients.serdes.prefix).filter((s) => s.value.instance_id === id);
  const statuses = (messageId: string) => log.of<MessageStatus>(topics.messageStatus, clients.serdes.prefix).map((s) => s.value).filter((s) => s.message_id === messageId);
  const inbound = (waId: string) => log.of<InboundMessage>(topics.inboundMessages, clients.serdes.prefix).find((s) => s.value.wa_message_id === waId)?.value;

  async function addNumber(nickname: string): Promise<string> {
    const id = newId('inst');
    const state: InstanceState = {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: asInstanceId(id),
      phone: null,
      nickname,
      status: 'pending',
      previous_status: null,
      reason: null,
      health_score: 97,
      pool_ids: ['pool_main'],
      connector: 'sandbox',
      deleted: false,
    };
    await clients.producer.send(topics.instances, [{ key: id, value: state }]);
    return id;
  }

  async function control(id: string, value: SandboxCommand['control']): Promise<SandboxCommand> {
    const command: SandboxCommand = {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: asInstanceId(id),
      control: value,
    };
    await clients.producer.send(topics.sandboxCommands, [{ key: id, value: command }]);
    return command;
  }

  async function send(id: string, content: SendCommand['content'], to = customer, messageId = newId('msg')): Promise<SendCommand> {
    const command: SendCommand = {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: asInstanceId(id),
      message_id: asMessageId(messageId),
      client_reference: 'ref-1',
      to: phoneJid(to),
      origin: 'api',
      campaign_id: null,
      idempotency_key_hash: null, expires_at: null,
      quoted_message_id: null,
      mentions: [],
      content,
    };
    await clients.producer.send(topics.sendCommands, [{ key: id, value: command }]);
    return command;
  }

  const connected = (id: string) => waitFor(`${id} connected`, () => states(id).find((s) => s.value.status === 'connected')?.value);

  async function connectedNumber(nickname: string, phone: string): Promise<string> {
    const id = await addNumber(nickname);
    await control(id, { kind: 'connect', method: 'qr', phone, auto: true });
    await connected(id);
    return id;
  }

  /** The statuses of a send, once it reached `last`. */
  const settled = (messageId: string, last: MessageStatus['status']) =>
    waitFor(`${messageId} ${last}`, () => statuses(messageId).some((s) => s.status === last) && statuses(messageId));

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    await log.start(clients, `${env.id}.reader`);
    sandbox = new SandboxNetwork({ logger: quiet, receipts: new PendingReceipts(clients.pool), behaviours: new SandboxBehaviours(clients.pool), media, otp: cipher });
    role = await startConnectorRole(clients, { connectors: [sandbox], otp: otpCodes(clients) });
  });

  afterAll(async () => {
    await role?.stop();
    await log.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('pairs by QR: a challenge and connecting, then connected with the full state when the phone scans', async () => {
    const id = await addNumber('alpha');
    await control(id, { kind: 'connect', method: 'qr', phone: '+5511911110001', auto: false });
    const challenge = await waitFor('a QR challenge', () => log.of(topics.pairing, clients.serdes.prefix).find((c) => c.value.instance_id === id)?.value);
    expect(challenge).toMatchObject({ method: 'qr', account_id: account, project_id: project });
    expect(challenge.value).toMatch(/^2@/);
    expect(challenge.expires_at).toBeGreaterThan(Date.now());
    await waitFor('connecting', () => states(id).some((s) => s.value.status === 'connecting'));

    await control(id, { kind: 'scan', phone: null });
    const state = await connected(id);
    expect(state).toMatchObject({
      phone: '+5511911110001',
      previous_status: 'connecting',
      nickname: 'alpha',
      pool_ids: ['pool_main'],
      health_score: 97,
      account_id: account,
      connector: 'sandbox',
      deleted: false,
    });
    expect(state.event_id).toMatch(/^evt_/);
    const eventIds = states(id).map((s) => s.value.event_id);
    expect(new Set(eventIds).size).toBe(eventIds.length);
  });

  it('pairs by an 8-character code, connecting at once when auto', async () => {
    const id = await addNumber('code');
    await control(id, { kind: 'connect', method: 'code', phone: '+5511911110002', auto: true });
    const challenge = await waitFor('a pairing code', () => log.of(topics.pairing, clients.serdes.prefix).find((c) => c.value.instance_id === id)?.value);
    expect(challenge.method).toBe('code');
    expect(challenge.value).toMatch(/^[1-9A-Z]{8}$/);
    expect(await connected(id)).toMatchObject({ phone: '+5511911110002' });
  });

  it('a send yields sent, delivered and read, in order, with one wa_message_id', async () => {
    const id = await connectedNumber('sender', '+5511911110003');
    const command = await send(id, { kind: 'text', body: 'hello' });
    const facts = await settled(command.message_id, 'read');
    expect(facts.map((s) => s.status)).toEqual(['sent', 'delivered', 'read']);
    expect(new Set(facts.map((s) => s.wa_message_id)).size).toBe(1);
    expect(facts[0]).toMatchObject({ to: phoneJid(customer), client_reference: 'ref-1', error_code: null, instance_id: id });
    expect(sandbox.inspect(id)?.delivered).toEqual([expect.objectContaining({ message_id: command.message_id, content: { kind: 'text', body: 'hello' } })]);
  });

  it('a send to a failing phone fails, by the 0000 rule and by the fail_to behaviour, and one to a phone off the network with not_on_network', async () => {
    const id = await connectedNumber('failing', '+5511911110004');
    const byRule = await send(id, { kind: 'text', body: 'x' }, '+5511900000000');
    expect((await settled(byRule.message_id, 'failed'))[0]).toMatchObject({ status: 'failed', wa_message_id: null, error_code: 'delivery_failed' });

    await control(id, { kind: 'set_behaviour', delivered_after_ms: null, read_after_ms: null, fail_to: ['+5511955554444'], block_from: null });
    // Controls and sends ride different topics, so their order is not the log's: send once the change shows.
    await waitFor('the fail_to behaviour', () => sandbox.inspect(id)?.behaviour.failTo.has('+5511955554444'));
    const byBehaviour = await send(id, { kind: 'text', body: 'y' }, '+5511955554444');
    expect((await settled(byBehaviour.message_id, 'failed'))[0]!.error_code).toBe('delivery_failed');

    // A phone the network does not know (the sandbox's rule: ending in 9999) fails before it leaves.
    const offNetwork = await send(id, { kind: 'text', body: 'z' }, '+5511955559999');
    const [failed] = await settled(offNetwork.message_id, 'failed');
    expect(failed).toMatchObject({ status: 'failed', wa_message_id: null, error_code: 'not_on_network' });
    expect(sandbox.inspect(id)!.delivered.some((d) => d.message_id === offNetwork.message_id)).toBe(false);
  });

  it('a send on a disconnected or never paired number fails with not_connected', async () => {
    const id = await connectedNumber('dropping', '+5511911110005');
    await control(id, { kind: 'set_status', status: 'disconnected', reason: 'network' });
    await waitFor('disconnected', () => states(id).find((s) => s.value.status === 'disconnected' && s.value.reason === 'network'));
    const dropped = await send(id, { kind: 'text', body: 'x' });
    expect((await settled(dropped.message_id, 'failed'))[0]).toMatchObject({ error_code: 'not_connected', wa_message_id: null });

    const pending = await addNumber('never');
    const early = await send(pending, { kind: 'text', body: 'x' });
    expect((await settled(early.message_id, 'failed'))[0]!.error_code).toBe('not_connected');

    const unknown = await send(newId('inst'), { kind: 'text', body: 'x' });
    expect((await settled(unknown.message_id, 'failed'))[0]!.error_reason).toBe('unknown number');
  });

  it('executes a repeated SendCommand (same message_id) once', async () => {
    const id = await connectedNumber('once', '+5511911110006');
    const first = await send(id, { kind: 'text', body: 'only once' });
    await settled(first.message_id, 'read');
    await send(id, { kind: 'text', body: 'only once' }, customer, first.message_id);
    const after = await send(id, { kind: 'text', body: 'next' });
    await settled(after.message_id, 'sent');

    const delivered = sandbox.inspect(id)!.delivered.filter((d) => d.message_id === first.message_id);
    expect(delivered).toHaveLength(1);
    const facts = statuses(first.message_id);
    expect(new Set(facts.map((s) => s.wa_message_id))).toEqual(new Set([delivered[0]!.wa_message_id]));
    expect(new Set(facts.filter((s) => s.status === 'sent').map((s) => s.event_id)).size).toBe(1);
  });

  it('sends again a send whose run died between its claim and its outcome, and the network keeps it once', async () => {
    const id = await connectedNumber('cut', '+5511911110016');
    // What a connector killed mid-send leaves: a claim without an outcome. For the first send the
    // network never got it; for the second the network took it (its id is known) before the kill.
    const claimOf = async (messageId: string) => {
      await clients.pool.query(
        `INSERT INTO connector.executed (message_id, instance_id, account_id, project_id, recipient) VALUES ($1, $2, $3, $4, $5)`,
        [messageId, id, account, project, phoneJid(customer)],
      );
    };
    const lost = asMessageId(newId('msg'));
    const taken = asMessageId(newId('msg'));
    await claimOf(lost);
    await claimOf(taken);
    const takenId = sentNetworkId(taken, 0);
    await clients.pool.query(`INSERT INTO sandbox.network_messages (instance_id, wa_message_id, sent_at) VALUES ($1, $2, $3)`, [id, takenId, Date.now()]);
    await send(id, { kind: 'text', body: 'cut before the network' }, customer, lost);
    await send(id, { kind: 'text', body: 'cut after the network' }, customer, taken);

    const lostFacts = await settled(lost, 'read');
    expect(lostFacts.map((s) => s.status)).toEqual(['sent', 'delivered', 'read']);
    expect(lostFacts[0]!.wa_message_id).toBe(sentNetworkId(lost, 0));
    const [sent] = await settled(taken, 'sent');
    expect(sent).toMatchObject({ status: 'sent', wa_message_id: takenId, error_code: null });
    const delivered = sandbox.inspect(id)!.delivered.map((d) => d.message_id);
    expect(delivered.filter((m) => m === lost)).toHaveLength(1);
    // The network had it already: not delivered a second time, and no second set of receipts owed.
    expect(delivered).not.toContain(taken);
    const { rows } = await clients.pool.query('SELECT 1 FROM sandbox.pending_receipts WHERE instance_id = $1 AND wa_message_id = $2', [id, takenId]);
    expect(rows).toHaveLength(0);
  });

  it('sends buttons and lists as numbered text, and an OTP as two bubbles whose code never reaches the log', async () => {
    const id = await connectedNumber('menus', '+5511911110007');
    const buttons = await send(id, { kind: 'buttons', body: 'Pick one', buttons: [{ id: 'a', title: 'Yes' }, { id: 'b', title: 'No' }] });
    const list = await send(id, {
      kind: 'list',
      body: 'Menu',
      sections: [{ title: 'Drinks', rows: [{ id: 'c', title: 'Coffee', description: 'hot' }, { id: 't', title: 'Tea', description: null }] }],
    });
    const code = '482913';
    const otp = await send(id, { kind: 'otp', code_masked: '••••13', code_ciphertext: cipher.seal(code), expiry_minutes: 5, body: 'Your login code:' });
    const otpFacts = await settled(otp.message_id, 'read');
    await settled(list.message_id, 'sent');

    const delivered = sandbox.inspect(id)!.delivered;
    const bodies = (messageId: string) => delivered.filter((d) => d.message_id === messageId).map((d) => d.content);
    expect(bodies(buttons.message_id)).toEqual([{ kind: 'text', body: 'Pick one\n\n1. Yes\n2. No' }]);
    expect(bodies(list.message_id)).toEqual([{ kind: 'text', body: 'Menu\n\nDrinks\n1. Coffee - hot\n2. Tea' }]);
    expect(bodies(otp.message_id)).toEqual([{ kind: 'text', body: 'Your login code:' }, { kind: 'text', body: code }]);
    const codeBubble = delivered.filter((d) => d.message_id === otp.message_id)[1]!;
    expect(otpFacts[0]!.wa_message_id).toBe(codeBubble.wa_message_id);
    expect(log.text()).not.toContain(code);
  });

  it('turns every kind of customer message into the right inbound record', async () => {
    const id = await connectedNumber('inbox', '+5511911110008');
    const own = phoneJid('+5511911110008');
    const from = phoneJid(customer);
    const ourPoll = await send(id, { kind: 'poll', name: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'], selectable_count: 2, message_secret: null });
    const ourPollId = (await settled(ourPoll.message_id, 'sent'))[0]!.wa_message_id!;

    const write = async (content: CustomerMessage['content'], extra: Partial<CustomerMessage> = {}) => {
      const command = await control(id, { kind: 'customer_message', from: customer, name: 'Ana', content, quoted_id: null, group: null, mentions: [], ...extra });
      return waitFor(`inbound ${content.kind}`, () => inbound(simulatedWaId(command.event_id)));
    };

    const text = await write({ kind: 'text', body: 'hi there' });
    expect(text).toMatchObject({
      origin: 'customer',
      chat_jid: from,
      from,
      to: null,
      sender: { jid: from, lid: null, name: 'Ana', phone: customer },
      content: { kind: 'text', body: 'hi there' },
      account_id: account,
      instance_id: id,
    });
    expect(text.event_id).toMatch(/^evt_/);
    expect(text.message_id).toMatch(/^msg_/);

    const image = await write(file('image', { data: Buffer.from('png bytes'), caption: 'look' }));
    expect(image.content).toMatchObject({ kind: 'image', caption: 'look', media: { mime_type: 'image/jpeg', size: 9 } });
    expect(image.content.kind === 'image' && media.files.get(image.content.media!.id)).toEqual({
      bytes: Buffer.from('png bytes'),
      owner: { accountId: account, projectId: project, instanceId: id },
    });
    expect((await write(file('video'))).content).toMatchObject({ kind: 'video', media: { mime_type: 'video/mp4' } });
    expect((await write(file('audio', { ptt: true }))).content).toMatchObject({ kind: 'audio', ptt: true });
    expect((await write(file('document', { filename: 'a.pdf' }))).content).toMatchObject({ kind: 'document', media: { filename: 'a.pdf' } });
    expect((await write(file('sticker'))).content).toMatchObject({ kind: 'sticker', media: { mime_type: 'image/webp' } });

    const location = { kind: 'location' as const, latitude: -23.55, longitude: -46.63, name: 'Sé', address: 'Praça da Sé' };
    expect((await write(location)).content).toEqual(location);
    const contact = { kind: 'contact' as const, contact_name: 'Bia', contact_vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Bia\nEND:VCARD' };
    expect((await write(contact)).content).toEqual(contact);

    const reaction = await write({ kind: 'reaction', quoted_message_id: ourPollId, emoji: '👍' });
    expect(reaction).toMatchObject({ quoted_id: ourPollId, quoted_participant: own, content: { emoji: '👍' } });

    const reply = await write({ kind: 'text', body: 'answering' }, { quoted_id: text.wa_message_id });
    expect(reply).toMatchObject({ quoted_id: text.wa_message_id, quoted_participant: from });

    const vote = await write({ kind: 'poll_vote', poll_message_id: ourPollId, selected: ['Salad', 'Pizza', 'Burger'] });
    expect(vote.content).toEqual({ kind: 'poll_vote', poll_message_id: ourPollId, selected: ['Pizza', 'Salad'] });

    const theirPoll = await write({ kind: 'poll', name: 'When?', options: ['Now', 'Later'], selectable_count: 1, message_secret: null });
    expect(theirPoll.content).toMatchObject({ kind: 'poll', name: 'When?', options: ['Now', 'Later'] });
    const ownVote = await control(id, { kind: 'phone_message', to: customer, content: { kind: 'poll_vote', poll_message_id: theirPoll.wa_message_id, selected: ['Later'] }, quoted_id: null });
    expect((await waitFor('the owner vote', () => inbound(simulatedWaId(ownVote.event_id)))).content).toMatchObject({ selected: ['Later'] });

    const group = { jid: '120363040000000001@g.us', name: 'Team' };
    const inGroup = await write({ kind: 'text', body: '@Bia look' }, { group, mentions: ['+5511987650002', '99887766554433@lid'] });
    expect(inGroup).toMatchObject({ chat_jid: group.jid, from: group.jid, group, sender: { jid: from }, mentions: [phoneJid('+5511987650002'), '99887766554433@lid'] });
  });

  it('resolves a lid to the phone once the number knows it, keeping the lid', async () => {
    const id = await connectedNumber('lids', '+5511911110009');
    const lid = '12345678901234@lid';
    const before = await control(id, { kind: 'customer_message', from: lid, name: 'Lia', content: { kind: 'text', body: 'who am I' }, quoted_id: null, group: null, mentions: [] });
    expect((await waitFor('an unresolved lid', () => inbound(simulatedWaId(before.event_id)))).sender).toEqual({ jid: lid, lid, name: 'Lia', phone: null });

    await control(id, { kind: 'map_lid', lid, phone: '+5511987650003' });
    const after = await control(id, { kind: 'customer_message', from: lid, name: 'Lia', content: { kind: 'text', body: 'now?' }, quoted_id: null, group: null, mentions: [] });
    const message = await waitFor('a resolved lid', () => inbound(simulatedWaId(after.event_id)));
    expect(message.sender).toEqual({ jid: phoneJid('+5511987650003'), lid, name: 'Lia', phone: '+5511987650003' });
    expect(message.chat_jid).toBe(phoneJid('+5511987650003'));
  });

  it("writes the owner's phone messages with origin external, and customer messages sent while offline on connect", async () => {
    const id = await connectedNumber('owner', '+5511911110010');
    const own = phoneJid('+5511911110010');
    const fromPhone = await control(id, { kind: 'phone_message', to: customer, content: { kind: 'text', body: 'from my phone' }, quoted_id: null });
    expect(await waitFor('external', () => inbound(simulatedWaId(fromPhone.event_id)))).toMatchObject({
      origin: 'external',
      from: own,
      to: phoneJid(customer),
      chat_jid: phoneJid(customer),
      sender: { jid: own, phone: '+5511911110010', name: 'owner' },
    });

    await control(id, { kind: 'set_status', status: 'disconnected', reason: null });
    const offline = await control(id, { kind: 'customer_message', from: customer, name: null, content: { kind: 'text', body: 'are you there?' }, quoted_id: null, group: null, mentions: [] });
    await waitFor('disconnected', () => states(id).some((s) => s.value.status === 'disconnected'));
    expect(inbound(simulatedWaId(offline.event_id))).toBeUndefined();
    await control(id, { kind: 'set_status', status: 'connected', reason: null });
    await waitFor('the waiting message', () => inbound(simulatedWaId(offline.event_id)));
  });

  it('writes group facts with participants resolved', async () => {
    const id = await connectedNumber('groups', '+5511911110011');
    await control(id, { kind: 'map_lid', lid: '55555555555555@lid', phone: '+5511987650004' });
    await control(id, {
      kind: 'group_update',
      change: 'participant_added',
      group: { jid: '120363040000000002@g.us', name: 'Club' },
      author: customer,
      participants: ['55555555555555@lid', '+5511987650005'],
      subject: null,
      description: null,
    });
    const event = await waitFor('a group event', () => log.of(topics.groups, clients.serdes.prefix).find((g) => g.value.instance_id === id)?.value);
    expect(event).toMatchObject({ kind: 'participant_added', group: { jid: '120363040000000002@g.us', name: 'Club' }, author: phoneJid(customer), project_id: project });
    expect(event.participants).toEqual([
      { jid: phoneJid('+5511987650004'), lid: '55555555555555@lid', name: null, phone: '+5511987650004' },
      { jid: phoneJid('+5511987650005'), lid: null, name: null, phone: '+5511987650005' },
    ]);
  });

  it('splits partitions between two members: each number has its session on exactly the member owning its partition', async () => {
    const partitionOf = (id: string) => states(id)[0]!.partition;
    // Numbers land on partitions by their random ids. Numbers on seven of the twelve partitions put
    // at least one on each member's six, whatever the split (eight numbers alone missed one member
    // in CI once).
    const numbers = await Promise.all(Array.from({ length: 8 }, (_, i) => connectedNumber(`spread${i}`, `+55119222200${10 + i}`)));
    while (new Set(numbers.map(partitionOf)).size < 7) {
      expect(numbers.length, 'numbers to spread over seven partitions').toBeLessThan(60);
      numbers.push(await connectedNumber(`spread${numbers.length}`, `+55119222200${10 + numbers.length}`));
    }
    const second = new SandboxNetwork({ logger: quiet, receipts: new PendingReceipts(clients.pool), behaviours: new SandboxBehaviours(clients.pool), media, otp: cipher });
    const other = await startConnectorRole(clients, { connectors: [second], otp: otpCodes(clients) });
    let moved: string | undefined;
    let executed: SendCommand | undefined;
    try {
      const members = [
        { role, sandbox },
        { role: other, sandbox: second },
      ];
      await waitFor(
        'both members to own 6 partitions with the sessions of their numbers open',
        () =>
          members.every((m) => m.role.ownedPartitions().length === 6) &&
          numbers.every((id) => members.filter((m) => m.sandbox.openSessions().includes(id)).length === 1) &&
          numbers.every((id) => members.find((m) => m.sandbox.openSessions().includes(id))!.role.ownedPartitions().includes(partitionOf(id))),
        { timeoutMs: 60_000 },
      );
      expect(new Set([...role.ownedPartitions(), ...other.ownedPartitions()]).size).toBe(12);

      moved = numbers.find((id) => other.ownedPartitions().includes(partitionOf(id)));
      expect(moved, 'some number moved to the second member').toBeDefined();
      expect(second.inspect(moved!)?.status, 'a connected number stays connected after the move').toBe('connected');
      executed = await send(moved!, { kind: 'text', body: 'after the move' });
      await settled(executed.message_id, 'read');
      expect(second.inspect(moved!)!.delivered.map((d) => d.message_id)).toContain(executed.message_id);
    } finally {
      await other.stop();
    }
    await waitFor('the first member to take every partition back', () => role.ownedPartitions().length === 12 && numbers.every((id) => sandbox.openSessions().includes(id)), {
      timeoutMs: 60_000,
    });

    // The send executed by the member that left is not executed again by the one that took over.
    await send(moved!, { kind: 'text', body: 'after the move' }, customer, executed.message_id);
    const next = await send(moved!, { kind: 'text', body: 'back home' });
    await settled(next.message_id, 'sent');
    expect(sandbox.inspect(moved!)!.delivered.map((d) => d.message_id)).toEqual([next.message_id]);
    expect(new Set(statuses(executed.message_id).map((s) => s.wa_message_id)).size).toBe(1);
  });
});
