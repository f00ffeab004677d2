/**
 * What retrying can do about a failure: `transient` causes (a lost connection, an unavailable
 * broker, a timeout, throttling) pass, so the work is retried for as long as it takes; a
 * `permanent` one (bad data) fails the same way every time, so the record goes to the dead
 * letters at once; an `unknown` one (most likely a bug) is retried a few times, then given up on.
 */
export type FailureKind = 'transient' | 'permanent' | 'unknown';

/** A failure with its kind: thrown by code that knows it, or classified once by `from`. */
export class GatewayFailure extends Error {
  override readonly name = 'GatewayFailure';

  private constructor(
    message: string,
    readonly kind: FailureKind,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get retryable(): boolean {
    return this.kind !== 'permanent';
  }

  static retryable(message: string, cause?: unknown): GatewayFailure {
    return new GatewayFailure(message, 'transient', { cause });
  }

  static nonRetryable(message: string, cause?: unknown): GatewayFailure {
    return new GatewayFailure(message, 'permanent', { cause });
  }

  /** The error as a failure of the kind `classify` finds. */
  static from(error: unknown): GatewayFailure {
    if (error instanceof GatewayFailure) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new GatewayFailure(message, classify(error), { cause: error });
  }
}

/**
 * Classifies an error of any client the gateway uses, by its shape (no client is imported here):
 * Postgres (SQLSTATE codes), ClickHouse (numeric codes with a type name), S3 (`$metadata`), Avro
 * (`SerdeError`), kafkajs, Node's network errors. Causes are looked at too, innermost last.
 */
export function classify(error: unknown): FailureKind {
  for (const link of causeChain(error)) {
    const kind = classifyOne(link);
    if (kind === 'transient' || kind === 'permanent') return kind;
  }
  return 'unknown';
}

type Shape = Record<string, unknown>;

/** Whether the error, or one of its causes, is a kafkajs protocol error of one of `types`. */
export function hasProtocolError(error: unknown, types: ReadonlySet<string>): boolean {
  return causeChain(error).some((link) => typeof link.type === 'string' && types.has(link.type));
}

function causeChain(error: unknown): Shape[] {
  const chain: Shape[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && chain.length < 8) {
    const next = queue.shift();
    if (typeof next !== 'object' || next === null || chain.includes(next as Shape)) continue;
    const shape = next as Shape;
    chain.push(shape);
    if ('cause' in shape) queue.push(shape.cause);
    if (Array.isArray(shape.errors)) queue.push(...(shape.errors as unknown[]));
  }
  return chain;
}

/** Node and undici codes of a connection that failed, broke or timed out. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN',
  'EAI_AGAIN', 'ENOTFOUND', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED',
]);

/** kafkajs errors of an unreachable or busy cluster. */
const KAFKA_TRANSIENT = new Set([
  'KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError', 'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound', 'KafkaJSLockTimeout', 'KafkaJSStaleTopicMetadataAssignment', 'KafkaJSMetadataNotLoaded',
]);

/** kafkajs protocol errors a record causes by itself. */
const KAFKA_PERMANENT = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);

/** ClickHouse error codes of data it cannot take: parse failures, type mismatches, values out of range. */
const CLICKHOUSE_PERMANENT = new Set([6, 26, 27, 38, 41, 53, 69, 70, 72, 117, 131, 321]);
/** ClickHouse error codes of a busy or unreachable server. */
const CLICKHOUSE_TRANSIENT = new Set([159, 202, 209, 210, 241, 242, 252, 319, 425, 999]);

const S3_THROTTLED = new Set(['Throttling', 'ThrottlingException', 'SlowDown', 'RequestTimeout', 'RequestTimeTooSkewed', 'TooManyRequestsException']);

function classifyOne(error: Shape): FailureKind | undefined {
  if (error instanceof GatewayFailure) return error.kind;
  const name = typeof error.name === 'string' ? error.name : '';
  const code = typeof error.code === 'string' || typeof error.code === 'number' ? String(error.code) : undefined;
  if (name === 'SerdeError') return 'permanent';
  if (name === 'TimeoutError' || name === 'AbortError') return 'transient';
  if (code !== undefined && NETWORK_CODES.has(code)) return 'transient';
  if (code !== undefined && typeof error.severity === 'string' && /^[0-9A-Z]{5}$/.test(code)) return postgres(code);
  if (code !== undefined && typeof error.type === 'string' && /^\d{1,4}$/.test(code)) return clickhouse(Number(code));
  if (typeof error.$metadata === 'object' && error.$metadata !== null) return s3(name, (error.$metadata as Shape).httpStatusCode);
  if (name.startsWith('KafkaJS')) {
    if (typeof error.type === 'string' && KAFKA_PERMANENT.has(error.type)) return 'permanent';
    if (KAFKA_TRANSIENT.has(name) || error.retriable === true) return 'transient';
    return 'unknown';
  }
  // The same input fails the same way: a value out of range (an invalid date), text that is not JSON.
  if (error instanceof RangeError || error instanceof SyntaxError) return 'permanent';
  return undefined;
}

function postgres(code: string): FailureKind {
  const cls = code.slice(0, 2);
  if (cls === '22' || cls === '23') return 'permanent';
  if (cls === '08' || cls === '53' || /^57P0/.test(code) || code === '57014' || code === '40001' || code === '40P01') return 'transient';
  return 'unknown';
}

function clickhouse(code: number): FailureKind {
  if (CLICKHOUSE_PERMANENT.has(code)) return 'permanent';
  if (CLICKHOUSE_TRANSIENT.has(code)) return 'transient';
  return 'unknown';
}

function s3(name: string, status: unknown): FailureKind {
  if (S3_THROTTLED.has(name) || status === 429 || status === 408 || (typeof status === 'number' && status >= 500)) return 'transient';
  if (typeof status === 'number' && status >= 400) return 'permanent';
  return 'unknown';
}
