// Media in a local folder: the embedded default when no S3 is wanted. `presign` gives a signed
// link to `GET /media/{id}`, which streams the file. Each object is `<key>` with its record
// beside it in `<key>.json`; the data file appears last (a rename), so a present file is complete.
import { randomUUID } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Media } from '../../schemas/records.js';
import type { MediaLinks } from '../../shared/media-links.js';
import { writeWithDigest } from './spool.js';
import { mediaKey, type MediaStore } from './store.js';
import { countStored, type RecordUsage } from './usage.js';

const KEY = /^media\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function createFilesystemMediaStore(options: {
  readonly dir: string;
  readonly links: MediaLinks;
  readonly recordUsage: RecordUsage;
}): MediaStore {
  const root = path.resolve(options.dir);
  const folder = path.join(root, 'media');

  // Keys also arrive from records (MediaSource.media_ref): only our own shape maps to a path.
  const fileOf = (storageKey: string) => (KEY.test(storageKey) ? path.join(root, storageKey) : undefined);

  const remove = async (storageKey: string) => {
    const file = fileOf(storageKey);
    if (file === undefined) return;
    await rm(file, { force: true });
    await rm(`${file}.json`, { force: true });
  };

  return {
    kind: 'filesystem',
    async put(source, { mimeType, filename, owner }) {
      const id = randomUUID();
      const key = mediaKey(id);
      const file = path.join(root, key);
      const partial = `${file}.partial`;
      try {
        const digest = await writeWithDigest(source instanceof Uint8Array ? Readable.from([source]) : source, partial);
        const media: Media = { id, mime_type: mimeType, filename, size: digest.size, storage_key: key, sha256: digest.sha256 };
        await writeFile(`${file}.json`, JSON.stringify(media));
        await rename(partial, file);
        return await countStored(media, owner, options.recordUsage, remove);
      } finally {
        await rm(partial, { force: true });
      }
    },
    async get(storageKey) {
      const file = fileOf(storageKey);
      if (file === undefined) return undefined;
      try {
        const { size } = await stat(file);
        const media = JSON.parse(await readFile(`${file}.json`, 'utf8')) as Media;
        return { body: createReadStream(file), size, mimeType: media.mime_type };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    presign: async (media, ttlSeconds) => options.links.mediaUrl(media.id, ttlSeconds),
    remove,
    ensure: async () => {
      await mkdir(folder, { recursive: true });
    },
    check: () => access(folder, constants.R_OK | constants.W_OK),
    close: () => undefined,
  };
}
