import { createHash } from 'node:crypto';
import { asEventId, type AccountId, type EventId } from '../../schemas/ids.js';
import type { PublicEvent, UsageAllowance, UsageRecord } from '../../schemas/records.js';

/** Percentages of an allowance that fire `usage.threshold` (spec 6.1). */
export const thresholdPercents = [80, 90, 100] as const;

/** The thresholds `used` has reached of `included`, lowest first. */
export function reachedPercents(used: number, included: number): number[] {
  if (included <= 0) return [];
  return thresholdPercents.filter((percent) => used * 100 >= included * percent);
}

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

/** The `threshold_reached` usage record of a threshold. */
export function thresholdRecord(t: Threshold): UsageRecord {
  return {
    event_id: thresholdEventId(t),
    occurred_at: t.occurredAt,
    account_id: t.accountId,
    project_id: null,
    instance_id: null,
    kind: 'threshold_reached',
    quantity: 0,
    message_id: null,
    media_id: null,
    allowance: t.allowance,
    percent: t.percent,
    used: t.used,
    included: t.included,
    plan: t.plan,
  };
}

/**
 * The public `usage.threshold` event: account scope, no project or number. The payload is the
 * spec's `percent, used, included, plan`, plus `allowance` (messages or media_storage) so a
 * receiver can tell which one was reached.
 */
export function thresholdEvent(t: Threshold): PublicEvent {
  return {
    event_id: thresholdEventId(t),
    occurred_at: t.occurredAt,
    account_id: t.accountId,
    project_id: null,
    instance_id: null,
    event_type: 'usage.threshold',
    scope: 'account',
    client_reference: null,
    group: null,
    sender: null,
    mentions: [],
    payload_json: JSON.stringify({ percent: t.percent, used: t.used, included: t.included, plan: t.plan, allowance: t.allowance }),
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
  };
}
