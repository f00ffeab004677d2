import { createHash, randomBytes } from 'node:crypto';
import type { WAMessage } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaileysNetwork } from '../../connectors/baileys/network.js';
import { BaileysProtocol } from '../../connectors/baileys/protocol.js';
import type { MediaSink } from '../../connectors/network/media-sink.js';
import type { NumberSession, SessionFact } from '../../connectors/network/connector.js';
import { pairedBaileysNumber } from '../support/baileys-numbers.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/env.js';
import { NetworkServer } from '../support/network-server.js';
import { imageMessage, loggedIn, SlowMediaServer, textMessage } from '../support/received-messages.js';
import { PINNED_WEB_VERSION } from '../../connectors/baileys/web-version.js';
import { ProcessFence } from '../../shared/process-fence.js';

const unused = (): never => {
  throw new Error('not reached: nothing is sent');
};

/** The media store, kept in memory: what was stored, by its hash. */
const memoryMedia = (): MediaSink => ({
  store: async (bytes, mime) => {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { id: sha256.slice(0, 32), mime_type: mime, filename: null, size: bytes.length, storage_key: `media/${sha256}`, sha256 };
  },
});

/**
 * Received messages through a real session's socket (issue 18 items 5 and 6). The local server
 * speaks no protocol, so messages are handed over as Baileys does once it has decrypted them and
 * sent the network its receipt: `messages.upsert` emitted on the socket's own event emitter, with
 * real `proto.WebMessageInfo` objects; their media come from a local media server that delays.
 */
describe('received messages of a Baileys session', () => {
  let db: TestDatabase;
  let server: NetworkServer;
  let media: SlowMediaServer;
  const sessions: NumberSession[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await NetworkServer.start();
    media = await SlowMediaServer.start();
  });

  afterAll(async () => {
    for (const session of sessions) await session.close();
    await media?.close();
    await server?.close();
    await db?.dispose();
  });

  async function liveNumber(label: string, fence?: ProcessFence) {
    const logger = pino({ level: 'silent' });
    const mapping = new BaileysProtocol({ pool: db.pool, logger, media: memoryMedia(), mediaOf: unused, otp: { open: unused }, mediaDownloadMs: 3_000 });
    const on = new BaileysNetwork({
      pool: db.pool,
      // Leases are not what these tests are about: the main pool carries them.
      leasePool: db.pool,
      logger,
      mapping,
      ...(fence && { fence }),
      socket: { url: (id) => server.url(id), connectTimeoutMs: 60_000, reconnectBaseMs: 100, reconnectMaxMs: 1_000, leaseRenewMs: 1_000, baileysLogLevel: 'silent', version: () => Promise.resolve(PINNED_WEB_VERSION) },
    });
    await on.prepare();
    const instance = await pairedBaileysNumber(db.pool, `inst_${label}_${Date.now().toString(36)}`, { account: 'acc_recv', project: 'prj_recv' });
    const facts: { readonly fact: SessionFact; readonly at: number }[] = [];
    const session = await on.open(instance, { emit: async (fact) => void facts.push({ fact, at: performance.now() }) });
    sessions.push(session);
    await waitFor('the socket', async () => server.openOf(instance.instance_id).length === 1 || undefined, { timeoutMs: 10_000 });
    const socket = on.sessionOf(instance.instance_id)!.liveSocket!;
    loggedIn(socket);
    const handOver = (...messages: WAMessage[]) => socket.ev.emit('messages.upsert', { type: 'notify', messages });
    const received = () => facts.flatMap(({ fact }) => (fact.kind === 'inbound' ? [fact.message] : []));
    return { id: instance.instance_id, session, facts, handOver, received };
  }

  it('writes received messages in the order the network gave them: a text waits for the image before it', async () => {
    const { handOver, received } = await liveNumber('order');
    const picture = randomBytes(4096);
    // Separate batches, as the network delivers separate messages.
    handOver(await imageMessage(media, 'IMG1', picture, 1_000));
    handOver(textMessage('TXT1', 'and the text after it'));
    handOver(await imageMessage(media, 'IMG2', randomBytes(1024), 200));
    handOver(textMessage('TXT2', 'last'));
    await waitFor('four messages', async () => received().length === 4 || undefined, { timeoutMs: 10_000 });
    expect(received().map((m) => m.wa_message_id)).toEqual(['IMG1', 'TXT1', 'IMG2', 'TXT2']);
    const image = received()[0]!.content;
    expect(image.kind === 'image' ? image.media?.sha256 : null).toBe(createHash('sha256').update(picture).digest('hex'));
  });

  it('bounds each download: a media server that never answers holds the number’s messages only until the bound', async () => {
    const { handOver, received } = await liveNumber('stalled');
    handOver(await imageMessage(media, 'STUCK', randomBytes(512), Infinity));
    handOver(textMessage('AFTER', 'still arrives'));
    await waitFor('both messages', async () => received().length === 2 || undefined, { timeoutMs: 10_000 });
    expect(received().map((m) => [m.wa_message_id, m.content.kind === 'image' ? m.content.media : 'text'])).toEqual([
      ['STUCK', null],
      ['AFTER', 'text'],
    ]);
  });

  it('ends a closing session’s socket at once when its fence ends, and still writes what it drains', async () => {
    const fence = new ProcessFence();
    fence.begin('draining');
    const { id, session, handOver, received } = await liveNumber('fence-drain', fence);
    handOver(await imageMessage(media, 'SLOWEST', randomBytes(2048), 2_000));
    handOver(textMessage('LAST', 'after it'));
    const closed = session.close();
    fence.end();
    await waitFor('the socket ended', async () => server.openOf(id).length === 0 || undefined, { timeoutMs: 10_000 });
    // Ended while the drain still waited on the download: the fence, not the drain, closed it.
    expect(received()).toEqual([]);
    await closed;
    expect(received().map((m) => m.wa_message_id)).toEqual(['SLOWEST', 'LAST']);
  });

  it('drains a closing session: every message handed over is written, in order, before its socket ends', async () => {
    const { id, session, facts, handOver, received } = await liveNumber('drain');
    handOver(await imageMessage(media, 'SLOW1', randomBytes(2048), 1_500));
    handOver(textMessage('T1', 'one'), textMessage('T2', 'two'));
    handOver(await imageMessage(media, 'SLOW2', randomBytes(2048), 500));
    await session.close();
    expect(received().map((m) => m.wa_message_id)).toEqual(['SLOW1', 'T1', 'T2', 'SLOW2']);
    expect(received().every((m) => m.content.kind !== 'image' || m.content.media !== null)).toBe(true);
    // The socket ended only once the last of them was written.
    const [socket] = server.connections.filter((c) => c.number === id);
    expect(socket!.closedAt).toBeDefined();
    expect(socket!.closedAt!).toBeGreaterThanOrEqual(facts.at(-1)!.at);
  });
});
