import type { MediaLinks } from '../../shared/media-links.js';
import { createFilesystemMediaStore } from './filesystem.js';
import type { S3Config } from './s3.js';
import type { MediaStore } from './store.js';
import type { RecordUsage } from './usage.js';

export type MediaStoreOptions = (
  | { readonly kind: 's3'; readonly s3: S3Config }
  | { readonly kind: 'filesystem'; readonly dir: string; readonly links: MediaLinks }
) & { readonly recordUsage: RecordUsage };

export function createMediaStore(options: MediaStoreOptions): MediaStore {
  if (options.kind === 'filesystem') return createFilesystemMediaStore(options);
  const s3 = options;
  return loadedOnFirstUse('s3', async () => (await import('./s3-store.js')).createS3MediaStore(s3));
}

/**
 * A store whose implementation (and SDK) is loaded on its first call: most roles never touch media,
 * and the S3 SDK is the largest of the modules a process would load at start.
 */
function loadedOnFirstUse(kind: MediaStore['kind'], load: () => Promise<MediaStore>): MediaStore {
  let loaded: Promise<MediaStore> | undefined;
  const store = () => (loaded ??= load());
  return {
    kind,
    put: async (source, options) => (await store()).put(source, options),
    get: async (storageKey) => (await store()).get(storageKey),
    presign: async (media, ttlSeconds) => (await store()).presign(media, ttlSeconds),
    remove: async (storageKey) => (await store()).remove(storageKey),
    ensure: async () => (await store()).ensure(),
    check: async () => (await store()).check(),
    close: () => void loaded?.then((opened) => opened.close(), () => undefined),
  };
}
