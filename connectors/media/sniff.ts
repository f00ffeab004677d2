// The type of media bytes from their first bytes (file signatures), for sends that name none.
import { Readable } from 'node:stream';

/** Enough bytes for every signature below. */
export const SNIFF_BYTES = 16;

type Rule = readonly [mimeType: string, matches: (at: (offset: number, text: string) => boolean, head: Uint8Array) => boolean];

// Most specific first: the ftyp brands before plain video/mp4, ADTS before other MPEG audio.
const RULES: readonly Rule[] = [
  ['image/jpeg', (at) => at(0, '\xff\xd8\xff')],
  ['image/png', (at) => at(0, '\x89PNG\r\n\x1a\n')],
  ['image/gif', (at) => at(0, 'GIF87a') || at(0, 'GIF89a')],
  ['image/webp', (at) => at(0, 'RIFF') && at(8, 'WEBP')],
  ['audio/wav', (at) => at(0, 'RIFF') && at(8, 'WAVE')],
  ['application/pdf', (at) => at(0, '%PDF-')],
  ['audio/ogg', (at) => at(0, 'OggS')],
  ['audio/amr', (at) => at(0, '#!AMR\n')],
  ['video/webm', (at) => at(0, '\x1a\x45\xdf\xa3')],
  ['audio/mpeg', (at) => at(0, 'ID3')],
  ['audio/mp4', (at) => at(4, 'ftypM4A ')],
  ['video/quicktime', (at) => at(4, 'ftypqt  ')],
  ['video/3gpp', (at) => at(4, 'ftyp3gp')],
  ['image/heic', (at) => at(4, 'ftypheic') || at(4, 'ftypheix') || at(4, 'ftypmif1')],
  ['video/mp4', (at) => at(4, 'ftyp')],
  ['audio/aac', (_at, head) => head[0] === 0xff && ((head[1] ?? 0) & 0xf6) === 0xf0],
  ['audio/mpeg', (_at, head) => head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0],
  ['application/zip', (at) => at(0, 'PK\x03\x04')],
];

/** The MIME type the bytes start like, or undefined when none of the known signatures matches. */
export function sniffMimeType(head: Uint8Array): string | undefined {
  const at = (offset: number, text: string) =>
    [...text].every((char, i) => head[offset + i] === char.charCodeAt(0));
  return RULES.find(([, matches]) => matches(at, head))?.[0];
}

/** Reads at least `bytes` bytes (fewer if the stream ends) and gives them back with a stream of the whole. */
export async function peek(source: Readable, bytes: number): Promise<{ head: Buffer; stream: Readable }> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let size = 0;
  while (size < bytes) {
    const next = await iterator.next();
    if (next.done === true) break;
    chunks.push(next.value);
    size += next.value.length;
  }
  // `yield*` hands a stop of the reader on to the source, which then closes.
  const rest: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: () => iterator };
  async function* whole() {
    yield* chunks;
    yield* rest;
  }
  return { head: Buffer.concat(chunks), stream: Readable.from(whole(), { objectMode: false }) };
}
