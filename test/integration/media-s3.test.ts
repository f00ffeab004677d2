// The S3 media store on the stack's real S3 server: round trips, pre-signed URLs, GET /media/{id}
// redirecting to them, and media sends ingested from a local HTTP server.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import Fastify from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSendMedia } from '../../api/media/ingest.js';
import { mediaRoutes } from '../../api/media/routes.js';
import { errorsPlugin } from '../../api/plugins/errors.js';
import { createHttpFetcher, type HttpFetcher } from '../../shared/http/fetch.js';
import { ingestMedia } from '../../connectors/media/ingest.js';
import { createMediaLinks } from '../../shared/media-links.js';
import { createMediaStore } from '../../connectors/media/create-store.js';
import type { MediaOwner, MediaStore } from '../../connectors/media/store.js';
import { asAccountId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { UsageRecord } from '../../schemas/records.js';
import { loadConfig } from '../../stack/config.js';

const owner: MediaOwner = { accountId: asAccountId('acc_s3'), projectId: asProjectId('prj_s3'), instanceId: asInstanceId('ins_s3') };
const JPEG = Buffer.concat([Buffer.from('ffd8ffe000104a46494600', 'hex'), randomBytes(2048)]);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function download(url: string): Promise<{ status: number; type: string | undefined; bytes: Buffer }> {
  const response = await request(url, { headersTimeout: 5_000 });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, type: response.headers['content-type'] as string | undefined, bytes };
}

describe('S3 media store', () => {
  const s3 = { ...loadConfig().s3, bucket: `media-test-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}` };
  /** A client of its own, to look into the bucket behind the store's back. */
  const rawS3 = () =>
    new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  const links = createMediaLinks({ secret: 'integration-secret', publicBaseUrl: 'http://gateway.test', ttlSeconds: 3600 });
  const usage: UsageRecord[] = [];
  let failUsage = false;
  let store: MediaStore;
  let http: HttpFetcher;
  let origin: Server;
  let originUrl: string;
  const app = Fastify();

  beforeAll(async () => {
    store = createMediaStore({
      kind: 's3',
      s3,
      recordUsage: async (record) => {
        if (failUsage) throw new Error('kafka is down');
        usage.push(record);
      },
    });
    await store.ensure();
    http = createHttpFetcher({ allowPrivateNetwork: true });
    origin = createServer((req, res) => {
      if (req.url === '/photo') return void res.writeHead(200).end(JPEG); // no Content-Type: sniffed
      if (req.url === '/files/report%20q1.pdf') return void res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7 ...');
      // Endless body without Content-Length.
      res.writeHead(200, { 'content-type': 'video/mp4' });
      const chunk = Buffer.alloc(64 * 1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    await app.register(errorsPlugin);
    await app.register(mediaRoutes, { store, links });
  });

  afterAll(async () => {
    await app.close();
    await http?.close();
    origin?.closeAllConnections();
    await new Promise((resolve) => origin?.close(resolve));
    store?.close();
    const client = rawS3();
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
    for (const { Key } of listed.Contents ?? []) await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key }));
    await client.send(new DeleteBucketCommand({ Bucket: s3.bucket }));
    client.destroy();
  });

  it('puts bytes and streams, gets them back, and serves them through a pre-signed URL', async () => {
    const media = await store.put(JPEG, { mimeType: 'image/jpeg', filename: 'photo.jpg', owner });
    expect(media).toMatchObject({ mime_type: 'image/jpeg', filename: 'photo.jpg', size: JPEG.length, storage_key: `media/${media.id}`, sha256: sha256(JPEG) });
    expect(usage.at(-1)).toMatchObject({
      event_id: `media_stored:${media.id}`,
      kind: 'media_stored',
      quantity: JPEG.length,
      media_id: media.id,
      account_id: 'acc_s3',
      instance_id: 'ins_s3',
    });

    const object = await store.get(media.storage_key);
    expect(object).toMatchObject({ size: JPEG.length, mimeType: 'image/jpeg' });
    expect(Buffer.concat(await object!.body.toArray())).toEqual(JPEG);

    const url = await store.presign(media, 60);
    const served = await download(url);
    expect(served.status).toBe(200);
    expect(served.type).toBe('image/jpeg');
    expect(served.bytes).toEqual(JPEG);

    const chunks = Array.from({ length: 20 }, (_, i) => Buffer.alloc(100_000, i));
    const streamed = await store.put(Readable.from(chunks), { mimeType: 'video/mp4', filename: null, owner });
    expect(streamed.size).toBe(2_000_000);
    expect(streamed.sha256).toBe(sha256(Buffer.concat(chunks)));
    // Hashes, not bytes: deep equality of megabytes is slow.
    expect(sha256((await download(await store.presign(streamed, 60))).bytes)).toBe(streamed.sha256);

    expect(await store.get('media/00000000-0000-4000-8000-000000000000')).toBeUndefined();
  });

  it('removes the object again when its usage cannot be written', async () => {
    const before = usage.length;
    failUsage = true;
    try {
      await expect(store.put(JPEG, { mimeType: 'image/jpeg', filename: null, owner })).rejects.toThrow('kafka is down');
    } finally {
      failUsage = false;
    }
    expect(usage).toHaveLength(before);
    const client = rawS3();
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
    client.destroy();
    const counted = new Set(usage.map((record) => `media/${record.media_id}`));
    expect((listed.Contents ?? []).map((object) => object.Key).filter((key) => !counted.has(key ?? ''))).toEqual([]);
  });

  it('answers GET /media/{id} with a redirect to a URL that serves the bytes', async () => {
    const media = await store.put(JPEG, { mimeType: 'image/jpeg', filename: null, owner });
    const link = new URL(links.mediaUrl(media.id));
    const response = await app.inject({ method: 'GET', url: link.pathname + link.search });
    expect(response.statusCode).toBe(302);
    const location = response.headers.location as string;
    expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/media/${media.id}?`)).toBe(true);
    expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('3600');
    expect((await download(location)).bytes).toEqual(JPEG);
    // The bucket is private: without the signature S3 refuses.
    expect((await download(location.split('?')[0]!)).status).toBe(403);
  });

  it('refuses an expired or tampered link', async () => {
    const media = await store.put(JPEG, { mimeType: 'image/jpeg', filename: null, owner });
    const link = new URL(links.mediaUrl(media.id));
    const inject = async (url: URL) => {
      const response = await app.inject({ method: 'GET', url: url.pathname + url.search });
      return { status: response.statusCode, code: response.json<{ code: string }>().code };
    };

    const laterExp = new URL(link);
    laterExp.searchParams.set('exp', String(Number(link.searchParams.get('exp')) + 3600));
    expect(await inject(laterExp)).toEqual({ status: 403, code: 'forbidden' });

    const otherSig = new URL(link);
    otherSig.searchParams.set('sig', randomBytes(32).toString('base64url'));
    expect(await inject(otherSig)).toEqual({ status: 403, code: 'forbidden' });

    const other = await store.put(JPEG, { mimeType: 'image/jpeg', filename: null, owner });
    const swapped = new URL(link);
    swapped.pathname = `/media/${other.id}`;
    expect(await inject(swapped)).toEqual({ status: 403, code: 'forbidden' });

    const past = createMediaLinks({ secret: 'integration-secret', publicBaseUrl: 'http://gateway.test', ttlSeconds: 60, now: () => Date.now() - 120_000 });
    expect(await inject(new URL(past.mediaUrl(media.id)))).toEqual({ status: 403, code: 'forbidden' });
  });

  it('ingests a media send from a URL, sniffing the type and naming the file', async () => {
    const photo = await ingestMedia({ store, http }, { url: `${originUrl}/photo` }, owner);
    expect(photo.source).toEqual({ url: null, media_ref: photo.media.storage_key, mime_type: 'image/jpeg', filename: 'photo' });
    expect(photo.media.sha256).toBe(sha256(JPEG));
    expect((await download(await store.presign(photo.media, 60))).bytes).toEqual(JPEG);

    const report = await ingestMedia({ store, http }, { url: `${originUrl}/files/report%20q1.pdf` }, owner);
    expect(report.source).toMatchObject({ mime_type: 'application/pdf', filename: 'report q1.pdf' });
  });

  it('refuses a URL body over the cap with media_too_large, storing nothing', async () => {
    const before = usage.length;
    await expect(ingestSendMedia({ store, http, maxBytes: 1024 * 1024 }, { url: `${originUrl}/endless` }, owner)).rejects.toMatchObject({
      code: 'media_too_large',
      statusCode: 413,
      params: { limit: '1 MiB' },
    });
    expect(usage).toHaveLength(before);
  });

  it('answers a private URL with invalid_request when the guard is on', async () => {
    const guarded = createHttpFetcher();
    try {
      await expect(ingestSendMedia({ store, http: guarded }, { url: `${originUrl}/photo` }, owner)).rejects.toMatchObject({
        code: 'invalid_request',
        statusCode: 400,
      });
    } finally {
      await guarded.close();
    }
  });
});
