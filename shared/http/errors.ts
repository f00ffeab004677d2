import { OUTBOUND_FAILURES, retriableStatus, type OutboundFailureKind } from './retriable.js';

/**
 * How an outbound request failed. `retryable` comes from the table in `retriable.ts`; `status` is
 * set when the server answered with an unwanted status (kind `status`).
 */
export class OutboundHttpError extends Error {
  override readonly name = 'OutboundHttpError';
  readonly retryable: boolean;

  private constructor(
    readonly kind: OutboundFailureKind,
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retryable = kind === 'status' ? retriableStatus(status ?? 0) : OUTBOUND_FAILURES[kind];
  }

  static of(kind: Exclude<OutboundFailureKind, 'status'>, message: string, cause?: unknown): OutboundHttpError {
    return new OutboundHttpError(kind, message, undefined, { cause });
  }

  static status(status: number, host: string): OutboundHttpError {
    return new OutboundHttpError('status', `${host} answered HTTP ${status}`, status);
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Names what undici or the socket threw; messages name the host only (queries may hold secrets). */
export function toOutboundHttpError(error: unknown, host: string): OutboundHttpError {
  if (error instanceof OutboundHttpError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  // A DOMException named TimeoutError is the reason of AbortSignal.timeout (the total deadline).
  if ((typeof code === 'string' && TIMEOUT_CODES.has(code)) || (error instanceof Error && error.name === 'TimeoutError')) {
    return OutboundHttpError.of('timeout', `${host} did not answer in time (${detail})`, error);
  }
  if (code === 'UND_ERR_INVALID_ARG') return OutboundHttpError.of('invalid_url', `unusable URL for ${host}: ${detail}`, error);
  return OutboundHttpError.of('network', `request to ${host} failed: ${detail}`, error);
}
