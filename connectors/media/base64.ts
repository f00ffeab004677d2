import { MediaError } from './errors.js';

// `data:image/png;base64,` before the payload, as browsers write it.
const DATA_URL = /^data:([^;,]*)(?:;[^;,]*)*;base64,/i;
const NOT_BASE64 = /[^A-Za-z0-9+/_-]/;

/**
 * Decodes the `media.base64` of a send (plain, or a `data:` URL whose type is returned), refusing
 * malformed text and, before decoding, anything over `maxBytes`.
 */
export function decodeBase64Media(text: string, maxBytes: number): { bytes: Buffer; mimeType: string | undefined } {
  const prefix = DATA_URL.exec(text);
  const payload = text
    .slice(prefix?.[0].length ?? 0)
    .replace(/\s+/g, '')
    .replace(/={1,2}$/, '');
  if (payload.length === 0) throw MediaError.invalidInput('media.base64 is empty');
  // A lone character after full groups of four encodes no byte.
  if (payload.length % 4 === 1 || NOT_BASE64.test(payload)) throw MediaError.invalidInput('media.base64 is not valid base64');
  if (Math.floor((payload.length * 3) / 4) > maxBytes) throw MediaError.tooLarge(maxBytes);
  return { bytes: Buffer.from(payload, 'base64'), mimeType: prefix?.[1]?.trim().toLowerCase() || undefined };
}
