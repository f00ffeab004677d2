import type { OutboundHttpError } from '../../shared/http/errors.js';

/** Why media given for a send cannot be stored. */
export const MediaErrorKinds = ['too_large', 'invalid_input', 'fetch_failed', 'unavailable'] as const;
export type MediaErrorKind = (typeof MediaErrorKinds)[number];

const MiB = 1024 * 1024;

/** A byte count as people read a cap: `64 MiB`, or bytes when not whole MiB. */
export function sizeText(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}

/**
 * Media a caller gave that cannot be used: over a cap, malformed, or a URL that could not be
 * fetched (`retryable` then says whether the same URL may work later). `unavailable` is ours, not
 * the caller's: no conversion could run now (too many at once, out of time, no ffmpeg).
 */
export class MediaError extends Error {
  override readonly name = 'MediaError';

  private constructor(
    readonly kind: MediaErrorKind,
    message: string,
    readonly retryable: boolean,
    /** The cap that was exceeded, as people read it (`64 MiB`, `30 min`): kind `too_large`. */
    readonly limit: string | undefined,
    /** The byte cap that was exceeded, when the cap is one of bytes. */
    readonly limitBytes: number | undefined,
    cause?: unknown,
  ) {
    super(message, { cause });
  }

  static tooLarge(limitBytes: number, cause?: unknown): MediaError {
    return new MediaError('too_large', `media is larger than ${limitBytes} bytes`, false, sizeText(limitBytes), limitBytes, cause);
  }

  /** Over a cap other than the upload's size: a voice note's length, a sticker's pixels or bytes. */
  static overCap(message: string, limit: string): MediaError {
    return new MediaError('too_large', message, false, limit, undefined);
  }

  static invalidInput(message: string, cause?: unknown): MediaError {
    return new MediaError('invalid_input', message, false, undefined, undefined, cause);
  }

  static unavailable(message: string, cause?: unknown): MediaError {
    return new MediaError('unavailable', message, true, undefined, undefined, cause);
  }

  /** A failed fetch of `media.url`; a body over the cap is `too_large` like any other. */
  static fromFetch(error: OutboundHttpError, limitBytes: number): MediaError {
    if (error.kind === 'too_large') return MediaError.tooLarge(limitBytes, error);
    return new MediaError('fetch_failed', `media.url could not be fetched: ${error.message}`, error.retryable, undefined, undefined, error);
  }
}
