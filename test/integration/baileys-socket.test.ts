import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BaileysProtocol } from '../../connectors/baileys/protocol.js';
import { BaileysNetwork } from '../../connectors/baileys/network.js';
import { PINNED_WEB_VERSION } from '../../connectors/baileys/web-version.js';
import { leasePool } from '../../connectors/baileys/lease.js';
import type { Pool } from 'pg';
import type { SocketOptions } from '../../connectors/baileys/socket-options.js';
import type { NumberSession, SessionFact } from '../../connectors/network/connector.js';
import type { InstanceState } from '../../schemas/records.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/env.js';
import { pairedBaileysNumber } from '../support/baileys-numbers.js';
import { NetworkServer } from '../support/network-server.js';

/** No traffic reaches these sockets: no media moves and no OTP is opened. */
const unused = (): never => {
  throw new Error('not reached: the local server speaks no protocol');
};

/**
 * The Baileys session's socket against a local WebSocket server that holds, drops or refuses
 * (issue 12): reconnects with growing, jittered waits and no busy loop; logged out and banned stop
 * for good; a number's socket opens only under its lease, and a second worker waits for it.
 */
describe('the Baileys session against a local network server', () => {
  let db: TestDatabase;
  let server: NetworkServer;
  let leases: Pool;
  const networks: BaileysNetwork[] = [];
  const protocols = new Map<BaileysNetwork, BaileysProtocol>();
  const sessions: NumberSession[] = [];
  const options = (overrides: Partial<SocketOptions> = {}): SocketOptions => ({
    url: (id) => server.url(id),
    connectTimeoutMs: 60_000,
    version: () => Promise.resolve(PINNED_WEB_VERSION),
    reconnectBaseMs: 100,
    reconnectMaxMs: 1_000,
    leaseRenewMs: 300,
    baileysLogLevel: 'silent',
    ...overrides,
  });

  async function network(overrides: Partial<SocketOptions> = {}): Promise<BaileysNetwork> {
    const logger = pino({ level: 'silent' });
    const mapping = new BaileysProtocol({ pool: db.pool, logger, media: { store: unused }, mediaOf: unused, otp: { open: unused } });
    const made = new BaileysNetwork({ pool: db.pool, leasePool: leases, logger, socket: options(overrides), mapping });
    protocols.set(made, mapping);
    await made.prepare();
    networks.push(made);
    return made;
  }

  const pairedNumber = (label: string) => pairedBaileysNumber(db.pool, `inst_${label}_${Date.now().toString(36)}`, { account: 'acc_socket', project: 'prj_socket' });

  async function open(on: BaileysNetwork, instance: InstanceState, facts: SessionFact[] = []) {
    const session = await on.open(instance, { emit: async (fact) => void facts.push(fact) });
    sessions.push(session);
    return { session, facts };
  }

  const statuses = (facts: SessionFact[]) => facts.flatMap((f) => (f.kind === 'state' ? [f.status] : []));

  beforeAll(async () => {
    db = await createTestDatabase();
    leases = leasePool(db.url, 300, pino({ level: 'silent' }));
    server = await NetworkServer.start();
    await network(); // creates the connector's tables
  });

  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.close();
  });

  afterAll(async () => {
    await server?.close();
    await leases?.end();
    await db?.dispose();
  });

  for (const [what, behaviour] of [
    ['refuses the upgrade (503)', { kind: 'refuse', status: 503 }],
    ['accepts and drops at once', { kind: 'drop' }],
  ] as const) {
    it(`reconnects with growing jittered waits while the server ${what}, and never loops`, async () => {
      const instance = await pairedNumber('flaky');
      server.set(instance.instance_id, behaviour);
      const { facts } = await open(await network(), instance);
      await waitFor('six attempts', async () => server.attemptsOf(instance.instance_id).length >= 6 || undefined, { timeoutMs: 10_000 });
      const attempts = server.attemptsOf(instance.instance_id);
      // Attempt n waits between half and all of min(1000, 100 * 2^(n-1)) ms after the close.
      const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
      gaps.forEach((gap, i) => expect(gap, `wait before attempt ${i + 2}`).toBeGreaterThanOrEqual(Math.min(1_000, 100 * 2 ** i) / 2 - 25));
      const sinceFirst = performance.now() - attempts[0]!;
      expect(attempts.length).toBeLessThanOrEqual(2 + sinceFirst / 50);
      expect(statuses(facts)).toContain('disconnected');
      const closed = facts.find((f) => f.kind === 'state' && f.status === 'disconnected');
      expect(closed?.kind === 'state' ? closed.reason : null).toMatch(/connection closed/);
    });
  }

  /** What Baileys' socket does when the network ends the stream with this code after login. */
  const streamError = (statusCode: number) => Object.assign(new Error('Stream Errored'), { output: { statusCode } });

  for (const [code, status, authKept] of [
    [401, 'logged_out', false],
    [403, 'banned', true],
  ] as const) {
    it(`stops for good when the network ends the stream with ${code} (${status}); auth state ${authKept ? 'kept' : 'dropped'}`, async () => {
      const instance = await pairedNumber(status);
      const on = await network();
      const { facts } = await open(on, instance);
      await waitFor('the socket', async () => server.openOf(instance.instance_id).length === 1 || undefined, { timeoutMs: 10_000 });
      await on.sessionOf(instance.instance_id)!.liveSocket!.end(streamError(code));
      await waitFor(status, async () => statuses(facts).includes(status) || undefined, { timeoutMs: 10_000 });
      const { rowCount } = await db.pool.query(`SELECT 1 FROM baileys.creds WHERE instance_id = $1`, [instance.instance_id]);
      expect(rowCount).toBe(authKept ? 1 : 0);
      // Well past the longest backoff: still the one attempt, and no socket.
      const until = performance.now() + 1_500;
      await waitFor('quiet time', async () => performance.now() >= until || undefined, { timeoutMs: 5_000, intervalMs: 100 });
      expect(server.attemptsOf(instance.instance_id)).toHaveLength(1);
      expect(server.openOf(instance.instance_id)).toHaveLength(0);
    });
  }

  it('turns the socket’s events into facts: a QR while pairing, the login, a received message, a receipt', async () => {
    const instance = { ...(await pairedNumber('pairing')), status: 'pending' as const, phone: null };
    await db.pool.query(`DELETE FROM baileys.creds WHERE instance_id = $1`, [instance.instance_id]);
    const on = await network();
    const { session, facts } = await open(on, instance);
    await session.pair('qr');
    await waitFor('the pairing socket', async () => server.openOf(instance.instance_id).length === 1 || undefined, { timeoutMs: 10_000 });
    const socket = on.sessionOf(instance.instance_id)!.liveSocket!;

    socket.ev.emit('connection.update', { qr: '2@qr-ref,noise,identity,adv' });
    const qr = await waitFor('the QR fact', async () => facts.find((f) => f.kind === 'pairing'), { timeoutMs: 5_000 });
    expect(qr).toMatchObject({ kind: 'pairing', method: 'qr', value: '2@qr-ref,noise,identity,adv' });

    // What the socket emits once the phone scanned: its identity, then the open connection.
    socket.ev.emit('creds.update', { me: { id: '5511977776666:7@s.whatsapp.net', lid: '777777777777777:7@lid' } });
    socket.ev.emit('connection.update', { connection: 'open' });
    const live = await waitFor('warming', async () => facts.find((f) => f.kind === 'state' && f.status === 'warming'), { timeoutMs: 5_000 });
    expect(live).toMatchObject({ phone: '+5511977776666' });
    const { rows } = await db.pool.query<{ creds: string }>(`SELECT creds FROM baileys.creds WHERE instance_id = $1`, [instance.instance_id]);
    expect(JSON.parse(rows[0]!.creds)).toMatchObject({ me: { id: '5511977776666:7@s.whatsapp.net' } });

    const message = proto.WebMessageInfo.fromObject({ key: { remoteJid: '5511988887777@s.whatsapp.net', fromMe: false, id: 'IN1' }, messageTimestamp: 1_764_000_000, message: { conversation: 'oi' } });
    socket.ev.emit('messages.upsert', { messages: [message as WAMessage], type: 'notify' });
    const inbound = await waitFor('the inbound fact', async () => facts.find((f) => f.kind === 'inbound'), { timeoutMs: 5_000 });
    expect(inbound).toMatchObject({ message: { wa_message_id: 'IN1', chat_jid: '5511988887777@s.whatsapp.net', content: { kind: 'text', body: 'oi' } } });

    // Our own send echoed back by the socket (marked ours before it left), and the owner's send from the phone.
    await protocols.get(on)!.rememberSending(instance.instance_id, 'OURS1');
    const echo = (id: string) => proto.WebMessageInfo.fromObject({ key: { remoteJid: '5511988887777@s.whatsapp.net', fromMe: true, id }, messageTimestamp: 1_764_000_001, message: { conversation: id } }) as WAMessage;
    socket.ev.emit('messages.upsert', { messages: [echo('OURS1'), echo('PHONE1')], type: 'append' });
    await waitFor('the phone send', async () => facts.find((f) => f.kind === 'inbound' && f.message.wa_message_id === 'PHONE1'), { timeoutMs: 5_000 });
    expect(facts.filter((f) => f.kind === 'inbound').map((f) => (f.kind === 'inbound' ? [f.message.wa_message_id, f.message.origin] : []))).toEqual([
      ['IN1', 'customer'],
      ['PHONE1', 'external'],
    ]);

    socket.ev.emit('messages.update', [{ key: { remoteJid: '5511988887777@s.whatsapp.net', fromMe: true, id: 'OUT1' }, update: { status: proto.WebMessageInfo.Status.DELIVERY_ACK } }]);
    const receipt = await waitFor('the receipt', async () => facts.find((f) => f.kind === 'status'), { timeoutMs: 5_000 });
    expect(receipt).toMatchObject({ wa_message_id: 'OUT1', status: 'delivered' });

    // The history sync teaches who is behind a lid: a later message under that lid is the phone's chat.
    socket.ev.emit('messaging-history.set', { chats: [], contacts: [], messages: [], lidPnMappings: [{ lid: '444444444444444@lid', pn: '5511944443333@s.whatsapp.net' }] });
    const byLid = proto.WebMessageInfo.fromObject({ key: { remoteJid: '444444444444444@lid', fromMe: false, id: 'LID1' }, messageTimestamp: 1_764_000_002, message: { conversation: 'de novo' } });
    socket.ev.emit('messages.upsert', { messages: [byLid as WAMessage], type: 'notify' });
    const resolved = await waitFor('the lid message', async () => facts.find((f) => f.kind === 'inbound' && f.message.wa_message_id === 'LID1'), { timeoutMs: 5_000 });
    expect(resolved).toMatchObject({ message: { chat_jid: '5511944443333@s.whatsapp.net', sender: { lid: '444444444444444@lid', phone: '+5511944443333' } } });
  });

  it('ends a pairing nobody scanned when the network times it out, and pairs again on request', async () => {
    const instance = { ...(await pairedNumber('unscanned')), status: 'pending' as const, phone: null };
    await db.pool.query(`DELETE FROM baileys.creds WHERE instance_id = $1`, [instance.instance_id]);
    const on = await network();
    const { session, facts } = await open(on, instance);
    await session.pair('qr');
    await waitFor('the pairing socket', async () => server.openOf(instance.instance_id).length === 1 || undefined, { timeoutMs: 10_000 });
    await on.sessionOf(instance.instance_id)!.liveSocket!.end(streamError(408));
    await waitFor('disconnected', async () => facts.find((f) => f.kind === 'state' && f.status === 'disconnected'), { timeoutMs: 5_000 });
    expect(facts.at(-1)).toMatchObject({ kind: 'state', status: 'disconnected', reason: 'pairing ended without a scan' });
    const until = performance.now() + 1_500;
    await waitFor('quiet time', async () => performance.now() >= until || undefined, { timeoutMs: 5_000, intervalMs: 100 });
    expect(server.attemptsOf(instance.instance_id)).toHaveLength(1);
    await session.pair('qr');
    await waitFor('a new pairing socket', async () => server.openOf(instance.instance_id).length === 1 || undefined, { timeoutMs: 10_000 });
  });

  it('opens a number’s socket only under its lease: a second worker waits until the first lets go', async () => {
    const instance = await pairedNumber('leased');
    const first = await open(await network(), instance);
    await waitFor('the first socket', async () => server.openOf(instance.instance_id).length === 1 || undefined, { timeoutMs: 10_000 });
    const second = await open(await network(), instance);
    // Three renewals of the first worker: the second has not connected.
    const until = performance.now() + 1_000;
    await waitFor('three renewals', async () => performance.now() >= until || undefined, { timeoutMs: 5_000, intervalMs: 100 });
    expect(server.attemptsOf(instance.instance_id)).toHaveLength(1);

    await first.session.close();
    await waitFor('the second socket', async () => server.attemptsOf(instance.instance_id).length === 2 || undefined, { timeoutMs: 10_000 });
    const [a, b] = server.connections.filter((c) => c.number === instance.instance_id);
    expect(a!.closedAt).toBeDefined();
    expect(a!.closedAt!).toBeLessThanOrEqual(b!.openedAt);
    await second.session.close();
    await waitFor('no socket left', async () => server.openOf(instance.instance_id).length === 0 || undefined, { timeoutMs: 5_000 });
  });
});
