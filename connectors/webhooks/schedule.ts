import type { DeliveryTask } from '../../schemas/records.js';
import { deliveryRetryTier, type TopicSpec } from '../../topics/index.js';

/** One retry: how long it waits, and the tier topic it waits on (the tier of that delay). */
export interface Retry {
  readonly delayMs: number;
  readonly tier: TopicSpec<DeliveryTask>;
}

/**
 * The retry schedule as data. Retry n (1-based) waits `retries[n-1]`, and there are as many retries
 * as delays (spec 6.3: up to 5 for account webhooks). Each tier holds tasks of one delay only, so a
 * tier's order is due order and a partition paused on its head holds nothing that is due sooner.
 */
export interface RetrySchedule {
  readonly retries: readonly [Retry, ...Retry[]];
  /** One tier a distinct delay, in the order of first use: the topics the dispatcher consumes. */
  readonly tiers: readonly TopicSpec<DeliveryTask>[];
}

export function retrySchedule(delaysMs: readonly number[]): RetrySchedule {
  const tiers = new Map(delaysMs.map((delayMs) => [delayMs, deliveryRetryTier(delayMs)]));
  const retries = delaysMs.map((delayMs) => ({ delayMs, tier: tiers.get(delayMs)! }));
  if (retries.length === 0) throw new Error('a retry schedule needs at least one delay');
  return { retries: retries as [Retry, ...Retry[]], tiers: [...tiers.values()] };
}

/** What follows an attempt that did not deliver. */
export type NextStep =
  | { readonly kind: 'retry'; readonly topic: TopicSpec<DeliveryTask>; readonly notBefore: number }
  /** Attempts used up, or a failure no retry can fix: the task goes to `gw.deliveries.dead`. */
  | { readonly kind: 'dead' }
  /** A test event: one attempt, nothing follows and nothing is dead-lettered. */
  | { readonly kind: 'none' };

/** The step after attempt `task.attempt`: retry n = attempt n + 1 goes to the tier of its own delay. */
export function nextStep(task: DeliveryTask, retryable: boolean, schedule: RetrySchedule, now: number): NextStep {
  if (task.trigger === 'test') return { kind: 'none' };
  const retry = schedule.retries[task.attempt - 1];
  if (!retryable || retry === undefined) return { kind: 'dead' };
  return { kind: 'retry', topic: retry.tier, notBefore: now + retry.delayMs };
}

/**
 * Where a delivery goes when its endpoint's queue is full: the first tier, after the first delay,
 * with its attempt number unchanged (no attempt was made).
 */
export function overflowStep(schedule: RetrySchedule, now: number): Extract<NextStep, { kind: 'retry' }> {
  const [first] = schedule.retries;
  return { kind: 'retry', topic: first.tier, notBefore: now + first.delayMs };
}
