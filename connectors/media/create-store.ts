import type { MediaLinks } from '../../shared/media-links.js';
import { createFilesystemMediaStore } from './filesystem.js';
import { createS3MediaStore } from './s3-store.js';
import type { S3Config } from './s3.js';
import type { MediaStore } from './store.js';
import type { RecordUsage } from './usage.js';

export type MediaStoreOptions = (
  | { readonly kind: 's3'; readonly s3: S3Config }
  | { readonly kind: 'filesystem'; readonly dir: string; readonly links: MediaLinks }
) & { readonly recordUsage: RecordUsage };

export function createMediaStore(options: MediaStoreOptions): MediaStore {
  return options.kind === 's3' ? createS3MediaStore(options) : createFilesystemMediaStore(options);
}
