import type { PoolClient } from 'pg';
import type { DeliveryAttempt } from '../../schemas/records.js';

/** A row of `deliveries.attempts` as written (timestamps as ISO strings for jsonb_populate_recordset). */
function attemptRow(a: DeliveryAttempt) {
  return {
    attempt_id: a.attempt_id,
    delivery_id: a.delivery_id,
    attempt: a.attempt,
    occurred_at: new Date(a.occurred_at).toISOString(),
    url: a.url,
    outcome: a.outcome,
    response_status: a.response_status,
    response_body_excerpt: a.response_body_excerpt,
    error: a.error,
    duration_ms: a.duration_ms,
    next_attempt_at: a.next_attempt_at === null ? null : new Date(a.next_attempt_at).toISOString(),
  };
}

/** Which of two attempts of a delivery is the later one: by attempt number, then start time, then id. */
function isLater(a: DeliveryAttempt, b: DeliveryAttempt): boolean {
  if (a.attempt !== b.attempt) return a.attempt > b.attempt;
  if (a.occurred_at !== b.occurred_at) return a.occurred_at > b.occurred_at;
  return a.attempt_id > b.attempt_id;
}

/** What new attempts add to a delivery: merged with the stored row by the same rules in SQL. */
interface DeliveryChange {
  readonly first: DeliveryAttempt;
  last: DeliveryAttempt;
  attempts: number;
  delivered: boolean;
  body_json: string | null;
  created_at: number;
}

function summarise(attempts: readonly DeliveryAttempt[]): DeliveryChange[] {
  const byDelivery = new Map<string, DeliveryChange>();
  for (const a of attempts) {
    const change = byDelivery.get(a.delivery_id);
    if (!change) {
      byDelivery.set(a.delivery_id, {
        first: a, last: a, attempts: 1, delivered: a.outcome === 'delivered', body_json: a.body_json, created_at: a.occurred_at,
      });
      continue;
    }
    change.attempts += 1;
    change.delivered ||= a.outcome === 'delivered';
    change.body_json ??= a.body_json;
    change.created_at = Math.min(change.created_at, a.occurred_at);
    if (isLater(a, change.last)) change.last = a;
  }
  return [...byDelivery.values()];
}

function deliveryRow(change: DeliveryChange) {
  const { first, last } = change;
  const at = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    delivery_id: first.delivery_id,
    target_kind: first.target_kind,
    target_id: first.target_id,
    account_id: first.account_id,
    project_id: first.project_id,
    instance_id: first.instance_id,
    event_id: first.event_id,
    event_type: first.event_type,
    trigger: first.trigger,
    body_json: change.body_json,
    created_at: at(change.created_at),
    attempts: change.attempts,
    delivered: change.delivered,
    last_attempt: last.attempt,
    last_attempt_id: last.attempt_id,
    last_attempt_at: at(last.occurred_at),
    last_url: last.url,
    last_outcome: last.outcome,
    last_response_status: last.response_status,
    last_response_excerpt: last.response_body_excerpt,
    last_error: last.error,
    next_attempt_at: at(last.next_attempt_at),
  };
}

const LAST_COLUMNS = [
  'last_attempt', 'last_attempt_id', 'last_attempt_at', 'last_url', 'last_outcome', 'last_response_status',
  'last_response_excerpt', 'last_error', 'next_attempt_at',
] as const;
const LATER = '(EXCLUDED.last_attempt, EXCLUDED.last_attempt_at, EXCLUDED.last_attempt_id) > (deliveries.last_attempt, deliveries.last_attempt_at, deliveries.last_attempt_id)';

/**
 * Records attempts once each (a redelivered record finds its attempt id taken and changes
 * nothing), then folds the new ones into their deliveries. The fold gives the same row in any
 * order of arrival: counts add up, `delivered` sticks, and the `last_*` fields follow the latest
 * attempt by (attempt number, start time, id), so a replay builds what the live run built.
 */
export async function recordAttempts(tx: PoolClient, attempts: readonly DeliveryAttempt[]): Promise<void> {
  const distinct = [...new Map(attempts.map((a) => [a.attempt_id, a])).values()];
  if (distinct.length === 0) return;
  const { rows } = await tx.query<{ attempt_id: string }>(
    `INSERT INTO attempts
     SELECT * FROM jsonb_populate_recordset(NULL::attempts, $1::jsonb)
     ON CONFLICT (attempt_id) DO NOTHING
     RETURNING attempt_id`,
    [JSON.stringify(distinct.map(attemptRow))],
  );
  const fresh = new Set(rows.map((r) => r.attempt_id));
  const changes = summarise(distinct.filter((a) => fresh.has(a.attempt_id))).map(deliveryRow);
  if (changes.length === 0) return;
  const columns = Object.keys(changes[0]!);
  await tx.query(
    `INSERT INTO deliveries (${columns.join(', ')})
     SELECT ${columns.join(', ')} FROM jsonb_populate_recordset(NULL::deliveries, $1::jsonb)
     ON CONFLICT (delivery_id) DO UPDATE SET
       attempts = deliveries.attempts + EXCLUDED.attempts,
       delivered = deliveries.delivered OR EXCLUDED.delivered,
       body_json = COALESCE(deliveries.body_json, EXCLUDED.body_json),
       created_at = LEAST(deliveries.created_at, EXCLUDED.created_at),
       ${LAST_COLUMNS.map((c) => `${c} = CASE WHEN ${LATER} THEN EXCLUDED.${c} ELSE deliveries.${c} END`).join(',\n       ')}`,
    [JSON.stringify(changes)],
  );
}
