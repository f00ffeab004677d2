/**
 * A failure that says whether retrying can help. Processors throw `nonRetryable` for records that
 * will never apply (bad data); anything unknown is wrapped once, at the runner, as retryable.
 */
export class GatewayFailure extends Error {
  override readonly name = 'GatewayFailure';

  private constructor(
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static retryable(message: string, cause?: unknown): GatewayFailure {
    return new GatewayFailure(message, true, { cause });
  }

  static nonRetryable(message: string, cause?: unknown): GatewayFailure {
    return new GatewayFailure(message, false, { cause });
  }

  static from(error: unknown): GatewayFailure {
    if (error instanceof GatewayFailure) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new GatewayFailure(message, true, { cause: error });
  }
}
