import type { DeliveryTask } from '../../schemas/records.js';
import { topics, type TopicSpec } from '../../topics/index.js';

/** Retry n (1-based) waits on tier topic n; the fourth and every later retry on the last tier. */
export const retryTiers: readonly TopicSpec<DeliveryTask>[] = [
  topics.deliveryRetry10s,
  topics.deliveryRetry1m,
  topics.deliveryRetry10m,
  topics.deliveryRetry1h,
];

/** What follows an attempt that did not deliver. */
export type NextStep =
  | { readonly kind: 'retry'; readonly topic: TopicSpec<DeliveryTask>; readonly notBefore: number }
  /** Attempts used up, or a failure no retry can fix: the task goes to `gw.deliveries.dead`. */
  | { readonly kind: 'dead' }
  /** A test event: one attempt, nothing follows and nothing is dead-lettered. */
  | { readonly kind: 'none' };

/**
 * The retry schedule as data: `delaysMs[n-1]` is the wait before retry n, and its length the
 * number of retries (spec 6.3: up to 5 for account webhooks).
 */
export function nextStep(task: DeliveryTask, retryable: boolean, delaysMs: readonly number[], now: number): NextStep {
  if (task.trigger === 'test') return { kind: 'none' };
  const retry = task.attempt;
  const delay = delaysMs[retry - 1];
  if (!retryable || delay === undefined) return { kind: 'dead' };
  return { kind: 'retry', topic: tierOf(retry), notBefore: now + delay };
}

/**
 * Where a delivery goes when its endpoint's queue is full: the first tier, after the first delay,
 * with its attempt number unchanged (no attempt was made).
 */
export function overflowStep(delaysMs: readonly number[], now: number): Extract<NextStep, { kind: 'retry' }> {
  return { kind: 'retry', topic: tierOf(1), notBefore: now + (delaysMs[0] ?? 0) };
}

function tierOf(retry: number): TopicSpec<DeliveryTask> {
  return retryTiers[Math.min(retry, retryTiers.length) - 1]!;
}
