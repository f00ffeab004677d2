import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { AUDIO_ENCODINGS, requireFfmpeg, SILENCE_THEN_TONE, synthesize } from '../support/media-samples.js';

interface Message {
  message_id: string;
  type: string;
  direction: 'in' | 'out';
  origin: string;
  instance_id: string;
  status?: string;
  body: string | null;
  wa_message_id: string | null;
  quoted_id?: string;
  sender?: { jid: string; lid: string | null; name: string | null };
  group?: { jid: string; name: string | null };
  mentions: string[];
  media?: { id?: string; url?: string; mime_type?: string; size?: number };
  latitude?: number;
  poll?: { name: string; options: string[] };
  poll_vote?: { poll_message_id: string; selected: string[] };
  code_masked?: string;
}

// The smallest valid PNG: a 1x1 transparent pixel.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
const OTP = '739251';

/**
 * The whole gateway in one process (api, processor and connector roles) on the real stack and the
 * sandbox network, driven only through HTTP as a customer would: every send type goes out and is
 * delivered and read, every received type comes in, and the inbox shows both.
 */
describe('end to end on the sandbox network', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  let files: Server;
  let filesUrl: string;
  /** An MP3 for the voice note, which the API converts to Opus. */
  let voice: Buffer;

  const headers = () => ({ authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' });
  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await roles.api!.app.inject({ method, url, headers: headers(), payload: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>(), raw: response };
  };
  const history = async (jid: string): Promise<Message[]> => {
    const { status, body } = await call('GET', `/conversations/${encodeURIComponent(jid)}/messages?limit=200`);
    return status === 200 ? (body.data as Message[]) : [];
  };
  const customer = (path: string, instance: string, body: unknown) => call('POST', `/sandbox/instances/${instance}/${path}`, body);

  beforeAll(async () => {
    await requireFfmpeg();
    const samples = await mkdtemp(join(tmpdir(), 'e2e-voice-'));
    voice = await readFile(await synthesize(samples, AUDIO_ENCODINGS.mp3.file, SILENCE_THEN_TONE, AUDIO_ENCODINGS.mp3.args));
    await rm(samples, { recursive: true, force: true });
    env = await createTestEnv({ PORT: '0', ALLOW_PRIVATE_NETWORK: 'true' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    account = await createAccount(clients.producer, { name: 'Shop', email: 'owner@shop.test', locale: 'pt', sandboxNumbers: 2 }, connectSandboxNumbers(clients.producer));
    await waitFor('both sandbox numbers connected', async () => {
      const { status, body } = await call('GET', '/instances');
      const data = status === 200 ? (body.data as Array<{ status: string }>) : [];
      return data.length === 2 && data.every((n) => n.status === 'connected');
    }, { timeoutMs: 60_000, intervalMs: 100 });
    files = createServer((req, res) => {
      if (req.url === '/huge.bin') {
        // Announces 70 MiB: over the 64 MiB cap, refused before any byte is stored.
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(70 * 1024 * 1024) });
        res.write(Buffer.alloc(1024));
        return;
      }
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/pixel.png`;
  });

  afterAll(async () => {
    files?.close();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('sends every type, and the sandbox delivers and reads each one', async () => {
    const to = '+5511912340001';
    const jid = '5511912340001@s.whatsapp.net';
    const media = { base64: PNG.toString('base64'), mimetype: 'image/png', filename: 'pixel.png' };
    const sends: Array<[string, Record<string, unknown>]> = [
      ['text', { body: 'Olá!' }],
      ['image', { media: { url: filesUrl, caption: 'from a URL' } }],
      ['video', { media: { ...media, caption: 'a video' } }],
      ['document', { media: { ...media, caption: 'a document' } }],
      ['audio', { media: { base64: voice.toString('base64'), filename: 'hello.mp3', ptt: true } }],
      ['sticker', { media }],
      ['location', { latitude: -23.55, longitude: -46.63, name: 'Praça da Sé' }],
      ['contact', { contact_name: 'Ana', contact_phone: '+5511955550000' }],
      ['poll', { name: 'Almoço?', options: ['Sim', 'Não'], selectable_count: 1 }],
      ['buttons', { body: 'Escolha', buttons: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B' }] }],
      ['list', { body: 'Menu', sections: [{ rows: [{ id: 'p', title: 'Pizza' }] }] }],
      ['otp', { code: OTP, expiry_minutes: 5 }],
    ];
    const ids = new Map<string, string>();
    for (const [type, fields] of sends) {
      const { status, body } = await call('POST', `/messages/${type}`, { to, client_reference: `ref-${type}`, ...fields });
      expect(status, `${type}: ${JSON.stringify(body)}`).toBe(202);
      expect(body).toMatchObject({ status: 'queued', client_reference: `ref-${type}` });
      ids.set(type, body.message_id as string);
    }
    const sent = await waitFor('every send read', async () => {
      const messages = await history(jid);
      const ours = [...ids.values()].map((id) => messages.find((m) => m.message_id === id));
      return ours.every((m) => m?.status === 'read') ? messages : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    // One conversation: every send to the customer stayed on the number it started on.
    expect(new Set(sent.filter((m) => m.direction === 'out').map((m) => m.instance_id)).size).toBe(1);

    const react = await call('POST', '/messages/reaction', { to, quoted_message_id: sent.find((m) => m.type === 'text')!.wa_message_id, emoji: '👍' });
    expect(react.status).toBe(202);
    await waitFor('the reaction read', async () => (await history(jid)).find((m) => m.message_id === react.body.message_id && m.status === 'read'));

    const otp = sent.find((m) => m.type === 'otp')!;
    expect(otp.code_masked).toBe('••••51');
    expect(JSON.stringify(sent)).not.toContain(OTP);
    const tables = await clients.pool.query<{ dump: string }>(
      `SELECT string_agg(t::text, ' ') AS dump FROM (SELECT row_to_json(m)::text AS t FROM conversations.messages m UNION ALL SELECT row_to_json(c)::text FROM conversations.conversations c) x`,
    );
    expect(tables.rows[0]!.dump).not.toContain(OTP);
  });

  it('receives every type, resolves lids and votes, and shows them in the inbox', async () => {
    const { body } = await call('GET', '/instances');
    const number = (body.data as Array<{ id: string }>)[0]!.id;
    const from = '+5511987650002';
    const jid = '5511987650002@s.whatsapp.net';
    const png = { base64: PNG.toString('base64'), mimetype: 'image/png', filename: 'photo.png' };

    const poll = await call('POST', '/messages/poll', { to: from, name: 'Cor?', options: ['Azul', 'Verde', 'Rosa'], selectable_count: 2, instance_id: number });
    const pollWaId = await waitFor('the poll sent', async () => (await history(jid)).find((m) => m.message_id === poll.body.message_id && m.wa_message_id)?.wa_message_id);

    const first = await customer('customer-messages', number, { from, name: 'Bia', content: { type: 'text', body: 'Oi, tudo bem?' } });
    expect(first.status).toBe(202);
    const inbound: Array<Record<string, unknown>> = [
      { type: 'image', media: png, caption: 'foto' },
      { type: 'video', media: png, caption: 'vídeo' },
      { type: 'audio', media: png, ptt: true },
      { type: 'document', media: png, caption: 'doc' },
      { type: 'sticker', media: png },
      { type: 'location', latitude: -22.9, longitude: -43.2, name: 'Cristo' },
      { type: 'contact', contact_name: 'Caio' },
      { type: 'reaction', quoted_message_id: first.body.wa_message_id, emoji: '❤️' },
      { type: 'poll', name: 'Hoje?', options: ['Sim', 'Não'] },
      { type: 'poll_vote', poll_message_id: pollWaId, selected: ['Azul', 'Rosa'] },
    ];
    for (const content of inbound) expect((await customer('customer-messages', number, { from, name: 'Bia', content })).status).toBe(202);
    await customer('customer-messages', number, { from, content: { type: 'text', body: 'respondendo' }, quoted_id: first.body.wa_message_id });

    const received = await waitFor('every received type in the inbox', async () => {
      const messages = (await history(jid)).filter((m) => m.direction === 'in');
      return messages.length >= inbound.length + 2 ? messages : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    const byType = (type: string) => received.filter((m) => m.type === type);
    for (const type of ['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contact', 'reaction', 'poll', 'poll_vote']) {
      expect(byType(type).length, type).toBeGreaterThan(0);
    }
    expect(received.find((m) => m.body === 'Oi, tudo bem?')!.sender).toMatchObject({ jid, name: 'Bia' });
    expect(byType('poll_vote')[0]!.poll_vote).toEqual({ poll_message_id: pollWaId, selected: ['Azul', 'Rosa'] });
    expect(byType('reaction')[0]).toMatchObject({ body: '❤️', quoted_id: first.body.wa_message_id });
    expect(received.find((m) => m.body === 'respondendo')!.quoted_id).toBe(first.body.wa_message_id);
    expect(byType('location')[0]).toMatchObject({ latitude: -22.9 });

    const image = byType('image')[0]!;
    expect(image.media).toMatchObject({ mime_type: 'image/png', size: PNG.length });
    expect(image.media!.id).toMatch(/^[0-9a-f-]{36}$/);
    const link = new URL(image.media!.url!);
    const redirect = await roles.api!.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(redirect.statusCode).toBe(302);
    const bytes = await request(redirect.headers.location!);
    expect(Buffer.from(await bytes.body.arrayBuffer())).toEqual(PNG);
  });

  it('keeps lid identities on the phone conversation once resolved, and groups with mentions apart', async () => {
    const { body } = await call('GET', '/instances');
    const number = (body.data as Array<{ id: string }>)[1]!.id;
    await customer('lids', number, { lid: '81234567890123@lid', phone: '+5511976540003' });
    await customer('customer-messages', number, { from: '81234567890123@lid', name: 'Lia', content: { type: 'text', body: 'by lid' } });
    await customer('customer-messages', number, {
      from: '+5511976540004', content: { type: 'text', body: 'oi @todos' }, group: { jid: '120363000000000001@g.us', name: 'Clube' },
      mentions: ['+5511976540003'],
    });
    const lid = await waitFor('the lid message on the phone conversation', async () =>
      (await history('5511976540003@s.whatsapp.net')).find((m) => m.body === 'by lid'));
    expect(lid.sender).toMatchObject({ jid: '5511976540003@s.whatsapp.net', lid: '81234567890123@lid' });
    const group = await waitFor('the group message', async () => (await history('120363000000000001@g.us')).find((m) => m.body === 'oi @todos'));
    expect(group.group).toEqual({ jid: '120363000000000001@g.us', name: 'Clube' });
    expect(group.mentions).toEqual(['5511976540003@s.whatsapp.net']);
  });

  it('shows what the owner sent from the phone as external, and keeps a customer on the number they wrote to', async () => {
    const { body } = await call('GET', '/instances');
    const second = (body.data as Array<{ id: string }>)[1]!.id;
    const jid = '5511965430005@s.whatsapp.net';
    await customer('customer-messages', second, { from: '+5511965430005', content: { type: 'text', body: 'hello second' } });
    await customer('phone-messages', second, { to: '+5511965430005', content: { type: 'text', body: 'answered from the phone' } });
    const external = await waitFor('the phone message', async () => (await history(jid)).find((m) => m.body === 'answered from the phone'));
    expect(external).toMatchObject({ direction: 'out', origin: 'external', instance_id: second });
    for (let i = 0; i < 3; i++) {
      const sent = await call('POST', '/messages/text', { to: '+5511965430005', body: `follow-up ${i}` });
      expect(sent.status).toBe(202);
      const message = await waitFor('the follow-up', async () => (await history(jid)).find((m) => m.message_id === sent.body.message_id));
      expect(message.instance_id).toBe(second);
    }
  });

  it('refuses media over 64 MiB with 413 media_too_large and private addresses when the guard is on', async () => {
    const huge = await call('POST', '/messages/document', { to: '+5511912340009', media: { url: filesUrl.replace('pixel.png', 'huge.bin') } });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ code: 'media_too_large' });
  });

  it('opts a customer out on a keyword and refuses later sends to them', async () => {
    const { body } = await call('GET', '/instances');
    const number = (body.data as Array<{ id: string }>)[0]!.id;
    await customer('customer-messages', number, { from: '+5511954320006', content: { type: 'text', body: 'PARAR' } });
    await waitFor('the contact opted out', async () => {
      const { status, body } = await call('GET', '/contacts?opted_out=true&q=5511954320006');
      return status === 200 && (body.data as unknown[]).length === 1;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    const refused = await call('POST', '/messages/text', { to: '+5511954320006', body: 'promo' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'contact_opted_out', locale: 'pt' });
  });

  it('counts each accepted send once in usage, the OTP as one', async () => {
    const usage = await waitFor('usage counted', async () => {
      const { status, body } = await call('GET', '/usage?granularity=month');
      const total = status === 200 ? (body.data as Array<{ messages: number }>).reduce((a, p) => a + p.messages, 0) : 0;
      return total >= 17 ? total : undefined;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    // 12 types + 1 reaction + 1 poll + 3 follow-ups + 1 refused (not counted) = 17 accepted.
    expect(usage).toBe(17);
  });
});
