// What a media send does with its `media` object (spec 4.2): the bytes from `url` or `base64` are
// stored first, so the send command carries only a reference (media bytes never travel on Kafka).
// A voice note or a sticker is converted on the way (conversion/): what is stored, counted and
// sent is what the network plays.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Media, MediaSource } from '../../schemas/records.js';
import { OutboundHttpError } from '../../shared/http/errors.js';
import type { HttpFetcher } from '../../shared/http/fetch.js';
import { decodeBase64Media } from './base64.js';
import type { MediaConverter } from './conversion/converter.js';
import type { Conversion, PlaybackOf } from './conversion/playback.js';
import { MediaError } from './errors.js';
import { peek, sniffMimeType, SNIFF_BYTES } from './sniff.js';
import { writeWithDigest } from './spool.js';
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
  /** Needed for voice notes and stickers. */
  readonly converter?: MediaConverter;
  /** Defaults to MEDIA_MAX_BYTES. */
  readonly maxBytes?: number;
}

export interface IngestedMedia<P = null> {
  readonly media: Media;
  /** For the SendCommand: the stored object by key, never a URL. */
  readonly source: MediaSource;
  /** What the network needs besides the bytes of a converted media; null when not converted. */
  readonly playback: P;
}

/** The caller's bytes, before they are stored. */
interface Given {
  readonly body: Uint8Array | Readable;
  readonly mimeType: string;
  readonly filename: string | null;
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

/** A file name for converted bytes: the caller's, ending in the new type's extension. */
function renamed(filename: string | null, extension: string): string | null {
  if (filename === null) return null;
  const stem = filename.replace(/\.[^./\\]{1,10}$/, '');
  return `${stem.slice(0, 255 - extension.length - 1)}.${extension}`;
}

function fromBase64(input: MediaInput & { base64: string }, maxBytes: number): Given {
  const { bytes, mimeType } = decodeBase64Media(input.base64, maxBytes);
  return { body: bytes, mimeType: mimeTypeOf(input, mimeType, bytes), filename: given(input.filename) ? input.filename : null };
}

/** The response's body streams on: its failures (over the cap, too slow) surface where it is read. */
async function fromUrl(http: HttpFetcher, input: MediaInput & { url: string }, maxBytes: number): Promise<Given> {
  const response = await http.get(input.url, { maxBytes });
  const { head, stream } = await peek(response.body, SNIFF_BYTES);
  if (head.length === 0) throw MediaError.invalidInput('media.url answered an empty body');
  return {
    body: stream,
    mimeType: mimeTypeOf(input, response.contentType, head),
    filename: given(input.filename) ? input.filename : filenameOf(response.url),
  };
}

async function open(deps: IngestDeps, input: MediaInput, maxBytes: number): Promise<Given> {
  const { url, base64 } = input;
  if (given(url) && !given(base64)) return fromUrl(deps.http, { ...input, url }, maxBytes);
  if (given(base64) && !given(url)) return fromBase64({ ...input, base64 }, maxBytes);
  throw MediaError.invalidInput('give exactly one of media.url and media.base64');
}

/** Converts the caller's bytes in a folder of its own, removed afterwards, and stores the result. */
async function storeConverted<C extends Conversion>(
  deps: IngestDeps & { converter: MediaConverter },
  conversion: C,
  source: Given,
  owner: MediaOwner,
): Promise<{ media: Media; playback: PlaybackOf<C> }> {
  const workDir = await mkdtemp(path.join(tmpdir(), 'gateway-convert-'));
  try {
    const input = path.join(workDir, 'input');
    await writeWithDigest(source.body instanceof Uint8Array ? Readable.from([source.body]) : source.body, input);
    const converted = await deps.converter.convert(conversion, input, workDir);
    const media = await deps.store.put(createReadStream(converted.file), {
      mimeType: converted.mimeType,
      filename: renamed(source.filename, converted.extension),
      owner,
    });
    return { media, playback: converted.playback };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

const sourceOf = (media: Media): MediaSource => ({ url: null, media_ref: media.storage_key, mime_type: media.mime_type, filename: media.filename });

/**
 * Stores the media of a send and returns it with the MediaSource for the command; with a
 * conversion, stores the converted media instead and returns what the network needs to play it.
 * Throws a MediaError for media the caller must fix (too large, malformed, URL not fetchable, not
 * convertible) or that cannot be converted now (`unavailable`).
 */
export async function ingestMedia(deps: IngestDeps, input: MediaInput, owner: MediaOwner): Promise<IngestedMedia>;
export async function ingestMedia<C extends Conversion>(
  deps: IngestDeps,
  input: MediaInput,
  owner: MediaOwner,
  conversion: C,
): Promise<IngestedMedia<PlaybackOf<C>>>;
export async function ingestMedia<C extends Conversion>(
  deps: IngestDeps,
  input: MediaInput,
  owner: MediaOwner,
  conversion?: C,
): Promise<IngestedMedia<PlaybackOf<C> | null>> {
  const maxBytes = deps.maxBytes ?? MEDIA_MAX_BYTES;
  try {
    if (conversion === undefined) {
      const source = await open(deps, input, maxBytes);
      const media = await deps.store.put(source.body, { mimeType: source.mimeType, filename: source.filename, owner });
      return { media, source: sourceOf(media), playback: null };
    }
    const { converter } = deps;
    if (converter === undefined) throw new Error(`ingestMedia: a ${conversion} needs a converter`);
    const { media, playback } = await converter.admit(async () => storeConverted({ ...deps, converter }, conversion, await open(deps, input, maxBytes), owner));
    return { media, source: sourceOf(media), playback };
  } catch (error) {
    throw error instanceof OutboundHttpError ? MediaError.fromFetch(error, maxBytes) : error;
  }
}
