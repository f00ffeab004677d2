import type { DeliveryTargetKind, DeliveryTask } from '../../schemas/records.js';
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

/**
 * The partner webhook's schedule (spec 6.3): 5 attempts, the retries 1 s, 2 s, 4 s and 8 s after
 * the attempt before, on tiers of their own (`gw.deliveries.retry.1s` ... `.8s`). Fixed by the
 * spec, so not configurable; `WEBHOOK_RETRY_DELAYS` is the account webhooks' schedule only.
 */
export const PARTNER_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000];

/** The schedule of each kind of target. */
export type RetrySchedules = { readonly [K in DeliveryTargetKind]: RetrySchedule };

export function retrySchedules(accountDelaysMs: readonly number[]): RetrySchedules {
  return { account_webhook: retrySchedule(accountDelaysMs), partner_webhook: retrySchedule(PARTNER_RETRY_DELAYS_MS) };
}

/**
 * Every tier of the schedules, each once (the schedules may share a delay, and then a tier: it
 * still holds tasks of that one delay only, so its order stays due order).
 */
export function tiersOf(schedules: RetrySchedules): TopicSpec<DeliveryTask>[] {
  const byName = new Map<string, TopicSpec<DeliveryTask>>();
  for (const schedule of Object.values(schedules)) for (const tier of schedule.tiers) byName.set(tier.name, tier);
  return [...byName.values()];
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
