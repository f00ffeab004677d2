import { thresholdEventId, type Threshold } from '../../events/renderers/index.js';
import { periodOf } from './period.js';
import type { UsageRecord } from '../../schemas/records.js';

/** Percentages of an allowance that fire `usage.threshold` (spec 6.1). */
export const thresholdPercents = [80, 90, 100] as const;

/** The thresholds `used` has reached of `included`, lowest first. */
export function reachedPercents(used: number, included: number): number[] {
  if (included <= 0) return [];
  return thresholdPercents.filter((percent) => used * 100 >= included * percent);
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

/** The threshold a `threshold_reached` record says was fired; undefined for any other record. */
export function firedThreshold(record: UsageRecord): Threshold | undefined {
  if (record.kind !== 'threshold_reached' || record.allowance === null || record.percent === null) return undefined;
  return {
    accountId: record.account_id,
    period: periodOf(record.occurred_at).id,
    allowance: record.allowance,
    percent: record.percent,
    used: record.used ?? 0,
    included: record.included ?? 0,
    plan: record.plan ?? '',
    occurredAt: record.occurred_at,
  };
}
