// The filesystem media store, base64 and URL-less ingest, and GET /media/{id} streaming from the
// folder: no services needed.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSendMedia, mediaGatewayError } from '../../api/media/ingest.js';
import { mediaRoutes } from '../../api/media/routes.js';
import { GatewayError } from '../../api/errors.js';
import { errorsPlugin } from '../../api/plugins/errors.js';
import { createHttpFetcher } from '../../shared/http/fetch.js';
import { decodeBase64Media } from '../../connectors/media/base64.js';
import { MediaError } from '../../connectors/media/errors.js';
import { ingestMedia } from '../../connectors/media/ingest.js';
import { createMediaLinks } from '../../shared/media-links.js';
import { sniffMimeType } from '../../connectors/media/sniff.js';
import { createMediaStore } from '../../connectors/media/create-store.js';
import type { MediaOwner, MediaStore } from '../../connectors/media/store.js';
import { mediaStoredUsage, usageProducer } from '../../connectors/media/usage.js';
import type { Media, UsageRecord } from '../../schemas/records.js';
import { asAccountId, asProjectId } from '../../schemas/ids.js';
import { topics } from '../../topics/index.js';

const owner: MediaOwner = { accountId: asAccountId('acc_1'), projectId: asProjectId('prj_1'), instanceId: null };
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('base64 media', () => {
  it('decodes plain base64, data URLs and base64 split over lines', () => {
    expect(decodeBase64Media(PNG.toString('base64'), 1024)).toEqual({ bytes: PNG, mimeType: undefined });
    expect(decodeBase64Media(`data:image/png;base64,${PNG.toString('base64')}`, 1024)).toEqual({ bytes: PNG, mimeType: 'image/png' });
    expect(decodeBase64Media(`data:Image/PNG;name=a.png;base64,${PNG.toString('base64')}`, 1024).mimeType).toBe('image/png');
    const wrapped = PNG.toString('base64').replace(/(.{8})/g, '$1\r\n');
    expect(decodeBase64Media(wrapped, 1024).bytes).toEqual(PNG);
    expect(decodeBase64Media(PNG.toString('base64url'), 1024).bytes).toEqual(PNG);
  });

  it.each(['not base64!', 'QUJD*', 'QUJDR', '====', '', 'data:image/png;base64,', 'QU=JD'])('refuses %j as invalid input', (text) => {
    expect(() => decodeBase64Media(text, 1024)).toThrow(expect.objectContaining({ kind: 'invalid_input', retryable: false }) as Error);
  });

  it('refuses media over the cap before decoding it', () => {
    const text = Buffer.alloc(1025).toString('base64');
    expect(() => decodeBase64Media(text, 1024)).toThrow(expect.objectContaining({ kind: 'too_large', limitBytes: 1024 }) as Error);
    expect(decodeBase64Media(Buffer.alloc(1024).toString('base64'), 1024).bytes).toHaveLength(1024);
  });
});

describe('mime sniffing', () => {
  it.each([
    [PNG, 'image/png'],
    [Buffer.from('ffd8ffe000104a464946', 'hex'), 'image/jpeg'],
    [Buffer.from('GIF89a\x01\x00', 'latin1'), 'image/gif'],
    [Buffer.from('RIFF\x00\x00\x00\x00WEBPVP8 ', 'latin1'), 'image/webp'],
    [Buffer.from('%PDF-1.7\n', 'latin1'), 'application/pdf'],
    [Buffer.from('OggS\x00\x02', 'latin1'), 'audio/ogg'],
    [Buffer.from('ID3\x04\x00', 'latin1'), 'audio/mpeg'],
    [Buffer.from('fff1508017fffc', 'hex'), 'audio/aac'],
    [Buffer.from('\x00\x00\x00\x20ftypisom\x00\x00\x02\x00', 'latin1'), 'video/mp4'],
    [Buffer.from('\x00\x00\x00\x1cftypM4A \x00\x00\x00\x00', 'latin1'), 'audio/mp4'],
    [Buffer.from('\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00', 'latin1'), 'video/quicktime'],
    [Buffer.from('PK\x03\x04\x14\x00', 'latin1'), 'application/zip'],
  ])('recognises %s', (head, mimeType) => {
    expect(sniffMimeType(head)).toBe(mimeType);
  });

  it('knows nothing about plain text', () => {
    expect(sniffMimeType(Buffer.from('hello'))).toBeUndefined();
  });
});

describe('media usage', () => {
  it('writes media_stored records to gw.usage, keyed by account', async () => {
    const sent: unknown[] = [];
    const record = usageProducer({ send: async (spec, records) => (sent.push([spec, records]), new Map()) });
    const media: Media = { id: 'm1', mime_type: 'image/png', filename: null, size: 42, storage_key: 'media/m1', sha256: 'ab' };
    await record(mediaStoredUsage(media, owner, 1_000));
    expect(sent).toEqual([
      [topics.usage, [{ key: 'acc_1', value: expect.objectContaining({ event_id: 'media_stored:m1', kind: 'media_stored', quantity: 42, occurred_at: 1_000 }) as unknown }]],
    ]);
  });
});

describe('filesystem media store', () => {
  let dir: string;
  let store: MediaStore;
  const usage: UsageRecord[] = [];
  let failUsage = false;
  const links = createMediaLinks({ secret: 'test-secret', publicBaseUrl: 'http://gateway.test', ttlSeconds: 3600 });
  const app = Fastify();

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'media-fs-test-'));
    store = createMediaStore({
      kind: 'filesystem',
      dir,
      links,
      recordUsage: async (record) => {
        if (failUsage) throw new Error('kafka is down');
        usage.push(record);
      },
    });
    await store.ensure();
    await app.register(errorsPlugin);
    await app.register(mediaRoutes, { store, links });
  });

  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores bytes and streams, counts them, and gives them back', async () => {
    const media = await store.put(PNG, { mimeType: 'image/png', filename: 'dot.png', owner });
    expect(media).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
      mime_type: 'image/png',
      filename: 'dot.png',
      size: PNG.length,
      storage_key: `media/${media.id}`,
      sha256: sha256(PNG),
    });
    expect(usage.at(-1)).toMatchObject({ kind: 'media_stored', quantity: PNG.length, media_id: media.id, account_id: 'acc_1', project_id: 'prj_1' });

    const chunks = [Buffer.alloc(100_000, 1), Buffer.alloc(50_000, 2)];
    const streamed = await store.put(Readable.from(chunks), { mimeType: 'application/octet-stream', filename: null, owner });
    expect(streamed.size).toBe(150_000);
    expect(streamed.sha256).toBe(sha256(Buffer.concat(chunks)));

    const object = await store.get(media.storage_key);
    expect(object).toMatchObject({ size: PNG.length, mimeType: 'image/png' });
    expect(Buffer.concat(await object!.body.toArray())).toEqual(PNG);
    expect(await store.get('media/00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(await store.get('../../etc/passwd')).toBeUndefined();
  });

  it('keeps nothing of a stream that fails, or of media whose usage cannot be written', async () => {
    const before = await readdir(path.join(dir, 'media'));
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(10);
        throw new Error('source broke');
      })(),
    );
    await expect(store.put(failing, { mimeType: 'image/png', filename: null, owner })).rejects.toThrow('source broke');
    failUsage = true;
    try {
      await expect(store.put(PNG, { mimeType: 'image/png', filename: null, owner })).rejects.toThrow('kafka is down');
    } finally {
      failUsage = false;
    }
    expect(await readdir(path.join(dir, 'media'))).toEqual(before);
  });

  it('serves a signed link by streaming the file, and refuses a bad or expired one', async () => {
    const media = await store.put(PNG, { mimeType: 'image/png', filename: null, owner });
    const link = new URL(await store.presign(media, 60));
    expect(link.origin).toBe('http://gateway.test');
    const response = await app.inject({ method: 'GET', url: link.pathname + link.search });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.rawPayload).toEqual(PNG);

    const tampered = new URL(link);
    tampered.searchParams.set('sig', `${link.searchParams.get('sig')?.slice(0, -1)}x`);
    const refused = await app.inject({ method: 'GET', url: tampered.pathname + tampered.search });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'forbidden' });

    const expired = createMediaLinks({ secret: 'test-secret', publicBaseUrl: 'http://gateway.test', ttlSeconds: 3600, now: () => Date.now() - 7_200_000 });
    const old = new URL(expired.mediaUrl(media.id));
    expect((await app.inject({ method: 'GET', url: old.pathname + old.search })).statusCode).toBe(403);

    const missing = new URL(links.mediaUrl('00000000-0000-4000-8000-000000000000'));
    const gone = await app.inject({ method: 'GET', url: missing.pathname + missing.search });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ code: 'not_found' });

    const unsigned = await app.inject({ method: 'GET', url: `/media/${media.id}` });
    expect(unsigned.statusCode).toBe(400);
  });

  it('ingests base64 media into a MediaSource that references the stored object', async () => {
    const http = createHttpFetcher();
    try {
      const { media, source } = await ingestMedia({ store, http }, { base64: PNG.toString('base64'), filename: 'a.png' }, owner);
      expect(media).toMatchObject({ mime_type: 'image/png', filename: 'a.png', size: PNG.length });
      expect(source).toEqual({ url: null, media_ref: media.storage_key, mime_type: 'image/png', filename: 'a.png' });
      const given = await ingestMedia({ store, http }, { base64: PNG.toString('base64'), mimetype: 'image/x-custom' }, owner);
      expect(given.source).toMatchObject({ mime_type: 'image/x-custom', filename: null });
      const unknown = await ingestMedia({ store, http }, { base64: Buffer.from('plain words').toString('base64') }, owner);
      expect(unknown.media.mime_type).toBe('application/octet-stream');

      await expect(ingestMedia({ store, http }, {}, owner)).rejects.toMatchObject({ kind: 'invalid_input' });
      await expect(ingestMedia({ store, http }, { url: 'https://x.test/a', base64: 'QUJD' }, owner)).rejects.toMatchObject({ kind: 'invalid_input' });
      await expect(ingestMedia({ store, http, maxBytes: 4 }, { base64: PNG.toString('base64') }, owner)).rejects.toMatchObject({ kind: 'too_large' });
    } finally {
      await http.close();
    }
  });

  it('answers media the caller must fix with media_too_large or invalid_request', async () => {
    const http = createHttpFetcher();
    try {
      await expect(ingestSendMedia({ store, http, maxBytes: 64 * 1024 * 1024 }, { base64: '!!' }, owner)).rejects.toMatchObject({
        code: 'invalid_request',
        statusCode: 400,
      });
    } finally {
      await http.close();
    }
    const tooLarge = mediaGatewayError(MediaError.tooLarge(64 * 1024 * 1024));
    expect(tooLarge).toBeInstanceOf(GatewayError);
    expect(tooLarge).toMatchObject({ code: 'media_too_large', statusCode: 413, params: { limit: '64 MiB' } });
    const other = new Error('S3 is down');
    expect(mediaGatewayError(other)).toBe(other);
  });
});
