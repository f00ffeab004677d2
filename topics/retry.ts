import type { Logger } from 'pino';
import { backoffMs } from '../shared/backoff.js';
import { GatewayFailure } from './failure.js';

/** Tries of an `unknown` failure before the record is given up on: about 30 s with the backoff below. */
export const UNKNOWN_ATTEMPTS = 6;

/** What a consumer's work came to. */
export type Settled<T> =
  | { readonly kind: 'done'; readonly value: T }
  /** A permanent failure, or an unknown one that outlived its tries: dead-letter what caused it. */
  | { readonly kind: 'failed'; readonly failure: GatewayFailure }
  /** The consumer stopped or lost the partition while waiting to retry. */
  | { readonly kind: 'stopped' };

export interface RetryScope {
  /** False once the batch should be left (stopping, partition lost). */
  isRunning(): boolean;
  /** Kept up while waiting, so the group does not take the partition away. */
  heartbeat(): Promise<void>;
  readonly logger: Logger;
  /** What is being tried, for the log. */
  readonly what: string;
}

/**
 * The one rule of every consumer: transient failures are retried with backoff for as long as
 * they last, a permanent one ends the work at once, and an unknown one after `UNKNOWN_ATTEMPTS`.
 */
export async function untilSettled<T>(work: () => Promise<T>, scope: RetryScope): Promise<Settled<T>> {
  for (let attempt = 1, unknown = 0; scope.isRunning(); attempt++) {
    try {
      return { kind: 'done', value: await work() };
    } catch (error) {
      const failure = GatewayFailure.from(error);
      if (failure.kind === 'permanent') return { kind: 'failed', failure };
      if (failure.kind === 'unknown' && ++unknown >= UNKNOWN_ATTEMPTS) {
        return { kind: 'failed', failure: gaveUp(failure, unknown) };
      }
      const delayMs = backoffMs(attempt);
      scope.logger.warn({ err: failure, kind: failure.kind, attempt, delayMs }, `${scope.what} failed; retrying`);
      await sleepWithHeartbeat(scope, delayMs);
    }
  }
  return { kind: 'stopped' };
}

/** An unknown failure that kept coming back, as a permanent one that says so. */
export function gaveUp(failure: GatewayFailure, attempts: number): GatewayFailure {
  return GatewayFailure.nonRetryable(`gave up after ${attempts} tries: ${failure.message}`, failure);
}

export async function sleepWithHeartbeat(scope: Pick<RetryScope, 'isRunning' | 'heartbeat'>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until && scope.isRunning()) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(1_000, until - Date.now()))));
    await scope.heartbeat().catch(() => undefined);
  }
}
