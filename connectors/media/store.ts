import type { Readable } from 'node:stream';
import type { AccountId, InstanceId, ProjectId } from '../../schemas/ids.js';
import type { Media } from '../../schemas/records.js';

/** Whose storage a media counts against (the `media_stored` usage record). */
export interface MediaOwner {
  readonly accountId: AccountId;
  readonly projectId: ProjectId | null;
  readonly instanceId: InstanceId | null;
}

export interface PutOptions {
  readonly mimeType: string;
  readonly filename: string | null;
  /** Null for the platform's own objects (partner logos), counted against no account. */
  readonly owner: MediaOwner | null;
}

export interface StoredObject {
  readonly body: Readable;
  readonly size: number;
  readonly mimeType: string;
}

/**
 * The private store of media. Objects are never public: readers get a pre-signed URL (S3) or a
 * signed link to `GET /media/{id}` that streams the file (filesystem).
 */
export interface MediaStore {
  readonly kind: 's3' | 'filesystem';
  /**
   * Stores the bytes under a new id, then writes a `media_stored` usage record (when it has an owner); a stream is read
   * once, to its end or its first error (which `put` then throws).
   */
  put(source: Uint8Array | Readable, options: PutOptions): Promise<Media>;
  /** The object, or undefined when there is none under the key. */
  get(storageKey: string): Promise<StoredObject | undefined>;
  /** A URL that serves the bytes for `ttlSeconds`, without credentials. */
  presign(media: Pick<Media, 'id' | 'storage_key'>, ttlSeconds: number): Promise<string>;
  remove(storageKey: string): Promise<void>;
  /** Creates the bucket or folder when missing. */
  ensure(): Promise<void>;
  /** Throws unless the store answers (readiness). */
  check(): Promise<void>;
  close(): void;
}

/** Where a media id is stored. One key per id lets `GET /media/{id}` find it without a lookup. */
export function mediaKey(mediaId: string): string {
  return `media/${mediaId}`;
}
