import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface Digest {
  readonly size: number;
  /** Hex SHA-256. */
  readonly sha256: string;
}

export function digestOf(bytes: Uint8Array): Digest {
  return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Copies a stream into a new file (`wx`: never over an existing one), hashing and counting on the way. */
export async function writeWithDigest(source: Readable, file: string): Promise<Digest> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    },
    createWriteStream(file, { flags: 'wx' }),
  );
  return { size, sha256: hash.digest('hex') };
}

/**
 * Runs `use` on a temporary copy of the stream, deleted afterwards: for stores that must know
 * the length before they upload.
 */
export async function withSpooledFile<T>(source: Readable, use: (file: string, digest: Digest) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gateway-media-'));
  try {
    const file = path.join(dir, 'body');
    return await use(file, await writeWithDigest(source, file));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
