import type { MediaSink } from '../connectors/network/index.js';
import type { MediaStore } from '../connectors/media/index.js';

/** Received media go to the media store, counted against the number's account. */
export function mediaSink(store: MediaStore): MediaSink {
  return {
    store: (bytes, mime, filename, owner) => store.put(bytes, { mimeType: mime, filename: filename ?? null, owner }),
  };
}
