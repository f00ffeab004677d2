export { mediaKey, type MediaStore, type MediaOwner, type PutOptions, type StoredObject } from './store.js';
export { createMediaStore, type MediaStoreOptions } from './create-store.js';
export { createMediaLinks, type MediaLinks, type MediaLinksOptions } from '../../shared/media-links.js';
export { ingestMedia, MEDIA_MAX_BYTES, type MediaInput, type IngestDeps, type IngestedMedia } from './ingest.js';
export { usageProducer, type RecordUsage } from './usage.js';
export { MediaError, type MediaErrorKind } from './errors.js';
export { createMediaConverter, ffmpegVersion, type MediaConverter, type Conversion, type Playback } from './conversion/index.js';
