import { createHash } from 'node:crypto';
import type { ThresholdPayload } from '../payloads.js';
import { asEventId, type AccountId, type EventId } from '../../schemas/ids.js';
import type { PublicEvent, UsageAllowance } from '../../schemas/records.js';
import { scheduledEvent } from './event.js';

export interface Threshold {
  readonly accountId: AccountId;
  /** Usage period id (`YYYY-MM-01`). */
  readonly period: string;
  readonly allowance: UsageAllowance;
  readonly percent: number;
  readonly used: number;
  readonly included: number;
  readonly plan: string;
  /** When the record that reached it happened. */
  readonly occurredAt: number;
}

/** Derived from what the threshold is, so a replay or a redelivery writes the same event again, never a new one. */
export function thresholdEventId(t: Pick<Threshold, 'accountId' | 'period' | 'allowance' | 'percent'>): EventId {
  const digest = createHash('sha256').update(`usage.threshold\n${t.accountId}\n${t.period}\n${t.allowance}\n${t.percent}`).digest('hex');
  return asEventId(`evt_${digest.slice(0, 32)}`);
}

/**
 * The public `usage.threshold` event: account scope, no project or number. The payload is the
 * spec's `percent, used, included, plan`, plus `allowance` (messages or media_storage) so a
 * receiver can tell which one was reached.
 */
export function thresholdEvent(t: Threshold): PublicEvent {
  const payload: ThresholdPayload = { percent: t.percent, used: t.used, included: t.included, plan: t.plan, allowance: t.allowance };
  return scheduledEvent({
    event_id: thresholdEventId(t),
    occurred_at: t.occurredAt,
    account_id: t.accountId,
    project_id: null,
    instance_id: null,
    event_type: 'usage.threshold',
    scope: 'account',
    payload,
  });
}
