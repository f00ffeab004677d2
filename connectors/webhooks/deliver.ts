import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DeliveryAttempt, DeliveryTask } from '../../schemas/records.js';
import { deliveryHeaders } from '../../events/signature.js';
import { continueTrace, GatewayFailure, topics, type Hop, type Producer, type RecordHeaders } from '../../topics/index.js';
import type { Endpoints } from './endpoint.js';
import type { EndpointLimiter } from './limiter.js';
import { eventTimeOf, type DeliveryMetrics } from './metrics.js';
import { judge, outcomeOf } from './outcome.js';
import type { PostResult, WebhookPoster } from './post.js';
import { nextStep, overflowStep, type NextStep, type RetrySchedules } from './schedule.js';

export interface DeliverDeps {
  readonly endpoints: Endpoints;
  readonly limiter: EndpointLimiter;
  readonly poster: WebhookPoster;
  readonly producer: Producer;
  /** The schedule of each kind of target: account webhooks `WEBHOOK_RETRY_DELAYS`, partners 1, 2, 4, 8 s. */
  readonly schedules: RetrySchedules;
  readonly logger: Logger;
  readonly metrics: DeliveryMetrics;
}

/**
 * Makes the next attempt of a task. Resolves once the task is settled: delivered, dropped, or
 * handed to a retry tier or the dead-letter topic with the producer's ack, its attempt recorded on
 * `gw.deliveries.attempts`. Rejects when it could not be settled: the intake tries it again, or
 * dead-letters its record when the failure is for good (a record too large for any topic).
 * Each attempt is a `webhook.deliver` hop, a child of the hop that wrote `headers` (of the task's
 * record): the records it writes (the attempt, the next attempt's task) carry it on.
 */
export type Deliver = (task: DeliveryTask, headers?: RecordHeaders) => Promise<void>;

/** What happened at the endpoint; only this part holds one of the endpoint's slots. */
type Exchange =
  | { readonly kind: 'gone'; readonly reason: string; readonly url?: string }
  | { readonly kind: 'posted'; readonly url: string; readonly startedAt: number; readonly result: Exclude<PostResult, { kind: 'aborted' }> };

export function createDeliver(deps: DeliverDeps): Deliver {
  return async (task, headers) => {
    const { event_id, delivery_id, account_id, attempt, target_kind } = task;
    const hop = continueTrace('webhook.deliver', headers, { kind: 'client', attributes: { event_id, delivery_id, account_id, attempt, target_kind } });
    try {
      await settle(deps, task, hop);
      hop.end();
    } catch (error) {
      hop.end(error instanceof Error ? error.message : String(error));
      throw error;
    }
  };
}

async function settle(deps: DeliverDeps, task: DeliveryTask, hop: Hop): Promise<void> {
  const exchanged = deps.limiter.run(task.target_id, () => exchange(deps, task));
  if (exchanged === undefined) return overflow(deps, task, hop);
  const done = await exchanged;
  if (done.kind === 'gone') {
    // A retry's delivery is in the history, pending: an attempt that posted nothing closes it and says why.
    if (task.attempt > 1 && done.url !== undefined) await recordDropped(deps, task, done.url, done.reason, hop);
    deps.metrics.ended('dropped', task.target_kind);
    deps.logger.info({ ...ids(task), reason: done.reason }, 'delivery dropped');
    return;
  }
  hop.mark('posted');
  await record(deps, task, done, hop);
}

const ids = (task: DeliveryTask) => ({ delivery_id: task.delivery_id, event_id: task.event_id, target_id: task.target_id, attempt: task.attempt });

/** Reads the target as it is now, signs the body and posts it. */
async function exchange(deps: DeliverDeps, task: DeliveryTask): Promise<Exchange> {
  const endpoint = deps.endpoints.of(task);
  if (endpoint.kind === 'gone') return endpoint;
  const startedAt = Date.now();
  if (endpoint.kind === 'unusable') return { kind: 'posted', url: endpoint.url, startedAt, result: { kind: 'refused', error: endpoint.reason, durationMs: 0 } };
  const result = await deps.poster.post(endpoint.url, task.body_json, deliveryHeaders(endpoint.secret, task.body_json, task));
  if (result.kind === 'aborted') throw GatewayFailure.retryable(`delivery ${task.delivery_id} aborted: the dispatcher is stopping`);
  return { kind: 'posted', url: endpoint.url, startedAt, result };
}

/** Writes the attempt and, when it failed, the task of the next attempt or the dead letter. */
async function record(deps: DeliverDeps, task: DeliveryTask, { url, startedAt, result }: Extract<Exchange, { kind: 'posted' }>, { headers }: Hop): Promise<void> {
  const verdict = judge(result, task.target_kind);
  const now = Date.now();
  const step: NextStep | undefined = verdict.delivered ? undefined : nextStep(task, verdict.retryable, deps.schedules[task.target_kind], now);
  const attempt = attemptOf(task, {
    occurred_at: startedAt,
    url,
    outcome: outcomeOf(verdict, step?.kind === 'retry'),
    response_status: result.kind === 'response' ? result.status : null,
    response_body_excerpt: result.kind === 'response' ? result.excerpt : null,
    error: result.kind === 'response' ? null : result.error,
    duration_ms: result.durationMs,
    next_attempt_at: step?.kind === 'retry' ? step.notBefore : null,
  });
  const key = task.target_id;
  const writes = [deps.producer.send(topics.deliveryAttempts, [{ key, value: attempt, headers }])];
  const lastError = verdict.delivered ? null : verdict.summary;
  if (step?.kind === 'retry') {
    const next: DeliveryTask = { ...task, occurred_at: now, attempt: task.attempt + 1, not_before: step.notBefore, last_error: lastError };
    writes.push(deps.producer.send(step.topic, [{ key, value: next, headers }]));
  } else if (step?.kind === 'dead') {
    const dead: DeliveryTask = { ...task, occurred_at: now, attempt: task.attempt + 1, not_before: now, last_error: lastError };
    writes.push(deps.producer.send(topics.deliveryDead, [{ key, value: dead, headers }]));
    deps.logger.info({ ...ids(task), error: lastError }, 'delivery given up: dead-lettered');
  }
  await Promise.all(writes);
  deps.metrics.ended(step?.kind === 'dead' ? 'dead' : attempt.outcome, task.target_kind);
  const eventAt = verdict.delivered ? eventTimeOf(task.body_json) : undefined;
  if (eventAt !== undefined) deps.metrics.delivered(eventAt, task.target_kind);
  if (deps.logger.isLevelEnabled('debug')) {
    deps.logger.debug({ ...ids(task), outcome: attempt.outcome, status: attempt.response_status, duration_ms: attempt.duration_ms }, 'delivery attempt');
  }
}

type AttemptResult = Pick<DeliveryAttempt, 'occurred_at' | 'url' | 'outcome' | 'response_status' | 'response_body_excerpt' | 'error' | 'duration_ms' | 'next_attempt_at'>;

/** The attempt record of `task`: its ids, and the first attempt's body (the history's copy). */
function attemptOf(task: DeliveryTask, result: AttemptResult): DeliveryAttempt {
  return {
    event_id: task.event_id,
    account_id: task.account_id,
    project_id: task.project_id,
    instance_id: task.instance_id,
    attempt_id: `att_${randomUUID().replaceAll('-', '')}`,
    delivery_id: task.delivery_id,
    target_kind: task.target_kind,
    target_id: task.target_id,
    event_type: task.event_type,
    attempt: task.attempt,
    trigger: task.trigger,
    body_json: task.attempt === 1 ? task.body_json : null,
    ...result,
  };
}

/** A retry whose target went (a webhook disabled, a partner deactivated): its final attempt, posted nowhere. */
async function recordDropped(deps: DeliverDeps, task: DeliveryTask, url: string, reason: string, { headers }: Hop): Promise<void> {
  const attempt = attemptOf(task, {
    occurred_at: Date.now(),
    url,
    outcome: 'failed_final',
    response_status: null,
    response_body_excerpt: null,
    error: `not sent: ${reason}`,
    duration_ms: 0,
    next_attempt_at: null,
  });
  await deps.producer.send(topics.deliveryAttempts, [{ key: task.target_id, value: attempt, headers }]);
}

/** The endpoint has a full queue: the task waits on the first tier, its attempt not counted. */
async function overflow(deps: DeliverDeps, task: DeliveryTask, { headers }: Hop): Promise<void> {
  const now = Date.now();
  const step = overflowStep(deps.schedules[task.target_kind], now);
  await deps.producer.send(step.topic, [{ key: task.target_id, value: { ...task, occurred_at: now, not_before: step.notBefore }, headers }]);
  deps.metrics.ended('deferred', task.target_kind);
  deps.logger.debug({ ...ids(task) }, 'endpoint queue full: delivery moved to the first retry tier');
}
