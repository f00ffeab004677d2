export { createMediaStore, mediaKey, type MediaStore, type MediaStoreOptions, type MediaOwner, type PutOptions, type StoredObject } from './store.js';
export { createMediaLinks, type MediaLinks, type MediaLinksOptions } from '../../shared/media-links.js';
export { ingestMedia, MEDIA_MAX_BYTES, type MediaInput, type IngestDeps, type IngestedMedia } from './ingest.js';
export { usageProducer, type RecordUsage } from './usage.js';
export { MediaError, type MediaErrorKind } from './errors.js';
