import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { SendCommand, UsageRecord } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { AUDIO_ENCODINGS, requireFfmpeg, SILENCE_THEN_TONE, synthesize } from '../support/media-samples.js';
import { collectTopic } from '../support/topic-collector.js';

interface HistoryMessage {
  message_id: string;
  type: string;
  status?: string;
  media?: { mime_type?: string; filename?: string };
}

/**
 * Voice notes and stickers through the API on the sandbox network, as a customer sends them: from
 * a URL of an MP3 and of a PNG, the number sends (and the media store keeps) what the network
 * plays, Opus in OGG and a 512x512 WebP; what cannot be converted is refused and never queued.
 */
describe('media the network plays, end to end on the sandbox', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  let files: Server;
  let filesUrl: string;
  let dir: string;
  let commands: { values: SendCommand[]; consumer: TopicConsumer };
  let usage: { values: UsageRecord[]; consumer: TopicConsumer };
  const served = new Map<string, { type: string; bytes: Buffer }>();

  const call = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await roles.api!.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };
  const history = async (jid: string): Promise<HistoryMessage[]> => {
    const response = await roles.api!.app.inject({
      method: 'GET',
      url: `/conversations/${encodeURIComponent(jid)}/messages?limit=50`,
      headers: { authorization: `Bearer ${account.api_key}` },
    });
    return response.statusCode === 200 ? response.json<{ data: HistoryMessage[] }>().data : [];
  };
  /** The send as the connector took it from the log, once the sandbox network has read it. */
  const sentAndRead = async (messageId: string, jid: string) => {
    const message = await waitFor(`${messageId} read`, async () => (await history(jid)).find((m) => m.message_id === messageId && m.status === 'read'), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const command = await waitFor(`the command of ${messageId}`, () => commands.values.find((c) => c.message_id === messageId));
    return { message, command };
  };
  const storedBytes = async (mediaRef: string | null) => {
    const object = await clients.media.get(mediaRef!);
    return Buffer.concat(await object!.body.toArray());
  };

  beforeAll(async () => {
    await requireFfmpeg();
    dir = await mkdtemp(path.join(tmpdir(), 'media-conversion-e2e-'));
    const mp3 = await synthesize(dir, AUDIO_ENCODINGS.mp3.file, SILENCE_THEN_TONE, AUDIO_ENCODINGS.mp3.args);
    served.set('/note.mp3', { type: 'audio/mpeg', bytes: await readFile(mp3) });
    served.set('/logo.png', { type: 'image/png', bytes: await sharp({ create: { width: 640, height: 320, channels: 4, background: '#c0392b' } }).png().toBuffer() });
    files = createServer((req, res) => {
      const file = served.get(req.url ?? '');
      if (!file) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': file.type }).end(file.bytes);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;

    env = await createTestEnv({ PORT: '0', ALLOW_PRIVATE_NETWORK: 'true' });
    clients = await testClients(env);
    commands = await collectTopic(clients, topics.sendCommands, `${env.id}.test-commands`);
    usage = await collectTopic(clients, topics.usage, `${env.id}.test-usage`);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    account = await createAccount(clients.producer, { name: 'Padaria', email: 'dona@padaria.test', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await waitFor('the sandbox number connected', async () => {
      const response = await roles.api!.app.inject({ method: 'GET', url: '/instances', headers: { authorization: `Bearer ${account.api_key}` } });
      return response.statusCode === 200 && response.json<{ data: Array<{ status: string }> }>().data.some((n) => n.status === 'connected');
    }, { timeoutMs: 60_000, intervalMs: 100 });
  });

  afterAll(async () => {
    files?.close();
    await commands?.consumer.stop();
    await usage?.consumer.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('sends an MP3 given as a voice note as Opus in OGG, with its duration and waveform', async () => {
    const sent = await call('/messages/audio', { to: '+5511912345601', media: { url: `${filesUrl}/note.mp3`, ptt: true } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const { message, command } = await sentAndRead(sent.body.message_id as string, '5511912345601@s.whatsapp.net');

    expect(message.media).toMatchObject({ mime_type: 'audio/ogg; codecs=opus', filename: 'note.ogg' });
    expect(command.content).toMatchObject({ kind: 'audio', ptt: true, seconds: 3, media: { mime_type: 'audio/ogg; codecs=opus' } });
    const content = command.content as Extract<SendCommand['content'], { kind: 'audio' }>;
    expect(content.waveform).toHaveLength(64);
    expect(Math.max(...content.waveform!.subarray(0, 19))).toBeLessThanOrEqual(2);
    expect(Math.max(...content.waveform!)).toBe(100);

    const bytes = await storedBytes(content.media.media_ref);
    expect(await fileTypeFromBuffer(bytes)).toEqual({ ext: 'opus', mime: 'audio/ogg; codecs=opus' });
    // Counted at its converted size, not the MP3's.
    const counted = await waitFor('the media counted', () => usage.values.find((u) => u.kind === 'media_stored' && u.quantity === bytes.length));
    expect(counted.account_id).toBe(account.account_id);
  });

  it('sends a PNG given as a sticker as a 512x512 WebP', async () => {
    const sent = await call('/messages/sticker', { to: '+5511912345602', media: { url: `${filesUrl}/logo.png` } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const { message, command } = await sentAndRead(sent.body.message_id as string, '5511912345602@s.whatsapp.net');

    expect(message.media).toMatchObject({ mime_type: 'image/webp', filename: 'logo.webp' });
    expect(command.content).toMatchObject({ kind: 'sticker', animated: false, media: { mime_type: 'image/webp' } });
    const bytes = await storedBytes(command.content.kind === 'sticker' ? command.content.media.media_ref : null);
    expect(await fileTypeFromBuffer(bytes)).toEqual({ ext: 'webp', mime: 'image/webp' });
    expect(await sharp(bytes).metadata()).toMatchObject({ format: 'webp', width: 512, height: 512, hasAlpha: true });
  });

  it('refuses media that cannot become a voice note or a sticker with 400, queues nothing, and frees the idempotency key', async () => {
    const before = commands.values.length;
    const notSound = await call('/messages/audio', { to: '+5511912345603', media: { url: `${filesUrl}/logo.png`, ptt: true } }, { 'idempotency-key': 'voice-1' });
    expect(notSound.status).toBe(400);
    expect(notSound.body).toMatchObject({ code: 'invalid_request' });
    expect(notSound.body.message as string).toMatch(/the media is not audio that can become a voice note/);
    const notPicture = await call('/messages/sticker', { to: '+5511912345603', media: { url: `${filesUrl}/note.mp3` } });
    expect(notPicture.status).toBe(400);
    expect(notPicture.body.message as string).toMatch(/a sticker must be a PNG, JPEG, GIF or WebP image/);

    // The same key with good media goes through: the failed attempt released it.
    const retried = await call('/messages/audio', { to: '+5511912345603', media: { url: `${filesUrl}/note.mp3`, ptt: true } }, { 'idempotency-key': 'voice-1' });
    expect(retried.status).toBe(202);
    await waitFor('the retried command', () => commands.values.find((c) => c.message_id === retried.body.message_id));
    expect(commands.values.slice(before).map((c) => c.message_id)).toEqual([retried.body.message_id]);
  });

  it('sends an audio without ptt as it was given', async () => {
    const sent = await call('/messages/audio', { to: '+5511912345604', media: { url: `${filesUrl}/note.mp3` } });
    expect(sent.status).toBe(202);
    const command = await waitFor('the command', () => commands.values.find((c) => c.message_id === sent.body.message_id));
    expect(command.content).toMatchObject({ kind: 'audio', ptt: false, seconds: null, waveform: null, media: { mime_type: 'audio/mpeg', filename: 'note.mp3' } });
    expect(await storedBytes(command.content.kind === 'audio' ? command.content.media.media_ref : null)).toEqual(served.get('/note.mp3')!.bytes);
  });
});
