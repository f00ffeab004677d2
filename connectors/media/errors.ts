import type { OutboundHttpError } from '../../shared/http/errors.js';

/** Why media given for a send cannot be stored. */
export const MediaErrorKinds = ['too_large', 'invalid_input', 'fetch_failed'] as const;
export type MediaErrorKind = (typeof MediaErrorKinds)[number];

/**
 * Media a caller gave that cannot be used: over the cap, malformed, or a URL that could not be
 * fetched (`retryable` then says whether the same URL may work later).
 */
export class MediaError extends Error {
  override readonly name = 'MediaError';

  private constructor(
    readonly kind: MediaErrorKind,
    message: string,
    readonly retryable: boolean,
    /** The cap that was exceeded (kind `too_large`). */
    readonly limitBytes: number | undefined,
    cause?: unknown,
  ) {
    super(message, { cause });
  }

  static tooLarge(limitBytes: number, cause?: unknown): MediaError {
    return new MediaError('too_large', `media is larger than ${limitBytes} bytes`, false, limitBytes, cause);
  }

  static invalidInput(message: string): MediaError {
    return new MediaError('invalid_input', message, false, undefined);
  }

  /** A failed fetch of `media.url`; a body over the cap is `too_large` like any other. */
  static fromFetch(error: OutboundHttpError, limitBytes: number): MediaError {
    if (error.kind === 'too_large') return MediaError.tooLarge(limitBytes, error);
    return new MediaError('fetch_failed', `media.url could not be fetched: ${error.message}`, error.retryable, undefined, error);
  }
}
