import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from './s3.js';
import { createMediaBucket } from './s3.js';
import { digestOf, withSpooledFile, type Digest } from './spool.js';
import { mediaKey, type MediaStore } from './store.js';
import { countStored, type RecordUsage } from './usage.js';

/** Media in a private S3 bucket; readers get pre-signed GET URLs. */
export function createS3MediaStore(options: { readonly s3: S3Config; readonly recordUsage: RecordUsage }): MediaStore {
  const bucket = createMediaBucket(options.s3);
  const { client } = bucket;
  const Bucket = bucket.bucket;

  // With the hash sent along, S3 refuses bytes that arrive changed.
  const putObject = (Key: string, Body: Uint8Array | Readable, ContentType: string, digest: Digest) =>
    client.send(
      new PutObjectCommand({
        Bucket,
        Key,
        Body,
        ContentType,
        ContentLength: digest.size,
        ChecksumSHA256: Buffer.from(digest.sha256, 'hex').toString('base64'),
      }),
    );

  const upload = async (key: string, source: Uint8Array | Readable, mimeType: string): Promise<Digest> => {
    if (source instanceof Uint8Array) {
      const digest = digestOf(source);
      await putObject(key, source, mimeType, digest);
      return digest;
    }
    // S3 needs the length before the upload starts: a stream is spooled to a file first.
    return withSpooledFile(source, async (file, digest) => {
      await putObject(key, createReadStream(file), mimeType, digest);
      return digest;
    });
  };

  const remove = async (Key: string) => {
    await client.send(new DeleteObjectCommand({ Bucket, Key }));
  };

  return {
    kind: 's3',
    async put(source, { mimeType, filename, owner }) {
      const id = randomUUID();
      const key = mediaKey(id);
      const digest = await upload(key, source, mimeType);
      const media = { id, mime_type: mimeType, filename, size: digest.size, storage_key: key, sha256: digest.sha256 };
      return countStored(media, owner, options.recordUsage, remove);
    },
    async get(Key) {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket, Key }));
        if (!(object.Body instanceof Readable)) throw new Error('S3 answered a body that is not a Node stream');
        return { body: object.Body, size: object.ContentLength ?? 0, mimeType: object.ContentType ?? 'application/octet-stream' };
      } catch (error) {
        if (error instanceof NoSuchKey) return undefined;
        throw error;
      }
    },
    presign: (media, ttlSeconds) =>
      getSignedUrl(client, new GetObjectCommand({ Bucket, Key: media.storage_key }), { expiresIn: ttlSeconds }),
    remove,
    ensure: () => bucket.ensure(),
    check: () => bucket.check(),
    close: () => bucket.close(),
  };
}
