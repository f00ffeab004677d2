// Signed references to stored media (spec 2.4 rule 2): `/media/{id}?exp=..&sig=..`, where `sig` is
// an HMAC-SHA256 of the id and the expiry under a server secret. The link is the credential, so
// the route that serves it needs no API key.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface MediaLinksOptions {
  readonly secret: string;
  /** Absolute base of the public API, e.g. `https://api.example.com`. */
  readonly publicBaseUrl: string;
  /** How long a link (and the pre-signed URL it redirects to) stays valid. */
  readonly ttlSeconds: number;
  /** Clock in milliseconds; tests move it. */
  readonly now?: () => number;
}

export interface MediaLinks {
  readonly ttlSeconds: number;
  /** The signed reference to a media, valid `ttlSeconds` (by default the configured TTL) from now: what `media.url` carries. */
  mediaUrl(mediaId: string, ttlSeconds?: number): string;
  /** True when `sig` signs (id, exp) and `exp` (Unix seconds) has not passed. */
  verify(mediaId: string, exp: number, sig: string): boolean;
}

export function createMediaLinks(options: MediaLinksOptions): MediaLinks {
  const now = options.now ?? Date.now;
  const base = options.publicBaseUrl.endsWith('/') ? options.publicBaseUrl : `${options.publicBaseUrl}/`;
  const sign = (mediaId: string, exp: number) =>
    createHmac('sha256', options.secret).update(`media\n${mediaId}\n${exp}`).digest('base64url');

  return {
    ttlSeconds: options.ttlSeconds,
    mediaUrl(mediaId, ttlSeconds = options.ttlSeconds) {
      const exp = Math.floor(now() / 1000) + ttlSeconds;
      const url = new URL(`media/${encodeURIComponent(mediaId)}`, base);
      url.searchParams.set('exp', String(exp));
      url.searchParams.set('sig', sign(mediaId, exp));
      return url.toString();
    },
    verify(mediaId, exp, sig) {
      if (!Number.isSafeInteger(exp) || exp * 1000 <= now()) return false;
      // Compared as text: decoding would ignore the spare bits of the last character.
      const expected = Buffer.from(sign(mediaId, exp));
      const given = Buffer.from(sig);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
