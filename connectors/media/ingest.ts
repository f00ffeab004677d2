// What a media send does with its `media` object (spec 4.2): the bytes from `url` or `base64` are
// stored first, so the send command carries only a reference (media bytes never travel on Kafka).
import type { Media, MediaSource } from '../../schemas/records.js';
import { OutboundHttpError } from '../../shared/http/errors.js';
import type { HttpFetcher } from '../../shared/http/fetch.js';
import { decodeBase64Media } from './base64.js';
import { MediaError } from './errors.js';
import { peek, sniffMimeType, SNIFF_BYTES } from './sniff.js';
import type { MediaOwner, MediaStore } from './store.js';

/** Spec 8.3: media sent from a URL; base64 uploads get the same cap. */
export const MEDIA_MAX_BYTES = 64 * 1024 * 1024;

const OCTET_STREAM = 'application/octet-stream';
const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+$/;
/** Declared types that say nothing about the bytes: sniff instead. */
const GENERIC_TYPES = new Set([OCTET_STREAM, 'binary/octet-stream', 'application/binary', 'application/unknown']);

/** The fields of a send's `media` object that say where the bytes are. */
export interface MediaInput {
  readonly url?: string | null;
  readonly base64?: string | null;
  readonly mimetype?: string | null;
  readonly filename?: string | null;
}

export interface IngestDeps {
  readonly store: MediaStore;
  readonly http: HttpFetcher;
  /** Defaults to MEDIA_MAX_BYTES. */
  readonly maxBytes?: number;
}

export interface IngestedMedia {
  readonly media: Media;
  /** For the SendCommand: the stored object by key, never a URL. */
  readonly source: MediaSource;
}

const given = (value: string | null | undefined): value is string => typeof value === 'string' && value !== '';

/** The caller's type, else the type the source declared unless it is generic, else the sniffed one. */
function mimeTypeOf(input: MediaInput, declared: string | undefined, head: Uint8Array): string {
  if (given(input.mimetype)) return input.mimetype;
  if (declared !== undefined && MIME_TYPE.test(declared) && !GENERIC_TYPES.has(declared)) return declared;
  return sniffMimeType(head) ?? OCTET_STREAM;
}

/** The last path segment of the URL that served the bytes, as a default file name. */
function filenameOf(url: URL): string | null {
  const segment = url.pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment).slice(0, 255) || null;
  } catch {
    return segment.slice(0, 255) || null;
  }
}

async function fromBase64(store: MediaStore, input: MediaInput & { base64: string }, owner: MediaOwner, maxBytes: number) {
  const { bytes, mimeType } = decodeBase64Media(input.base64, maxBytes);
  return store.put(bytes, {
    mimeType: mimeTypeOf(input, mimeType, bytes),
    filename: given(input.filename) ? input.filename : null,
    owner,
  });
}

async function fromUrl(deps: IngestDeps, input: MediaInput & { url: string }, owner: MediaOwner, maxBytes: number) {
  try {
    const response = await deps.http.get(input.url, { maxBytes });
    const { head, stream } = await peek(response.body, SNIFF_BYTES);
    if (head.length === 0) throw MediaError.invalidInput('media.url answered an empty body');
    return await deps.store.put(stream, {
      mimeType: mimeTypeOf(input, response.contentType, head),
      filename: given(input.filename) ? input.filename : filenameOf(response.url),
      owner,
    });
  } catch (error) {
    throw error instanceof OutboundHttpError ? MediaError.fromFetch(error, maxBytes) : error;
  }
}

/**
 * Stores the media of a send and returns it with the MediaSource for the command. Throws a
 * MediaError for media the caller must fix (too large, malformed, URL not fetchable).
 */
export async function ingestMedia(deps: IngestDeps, input: MediaInput, owner: MediaOwner): Promise<IngestedMedia> {
  const maxBytes = deps.maxBytes ?? MEDIA_MAX_BYTES;
  const { url, base64 } = input;
  let media: Media;
  if (given(url) && !given(base64)) media = await fromUrl(deps, { ...input, url }, owner, maxBytes);
  else if (given(base64) && !given(url)) media = await fromBase64(deps.store, { ...input, base64 }, owner, maxBytes);
  else throw MediaError.invalidInput('give exactly one of media.url and media.base64');
  return {
    media,
    source: { url: null, media_ref: media.storage_key, mime_type: media.mime_type, filename: media.filename },
  };
}
