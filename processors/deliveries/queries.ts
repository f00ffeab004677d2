import type { Pool } from 'pg';

/** pending: a retry is due; delivered: an attempt got through; failed: no attempt follows and none got through. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A row of `deliveries.deliveries`, as the API reads it. */
export interface DeliveryRow {
  readonly delivery_id: string;
  readonly target_id: string;
  readonly account_id: string;
  readonly project_id: string | null;
  readonly instance_id: string | null;
  readonly event_id: string;
  readonly event_type: string;
  readonly trigger: string;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly last_attempt_at: Date;
  readonly last_url: string;
  readonly last_outcome: string;
  readonly last_response_status: number | null;
  readonly last_response_excerpt: string | null;
  readonly last_error: string | null;
  readonly next_attempt_at: Date | null;
  readonly created_at: Date;
}

export interface DeliveryWithBody extends DeliveryRow {
  /** The exact body of the first attempt; null until that attempt is recorded. */
  readonly body_json: string | null;
}

/** A row of `deliveries.attempts`. */
export interface AttemptRow {
  readonly attempt_id: string;
  readonly attempt: number;
  readonly occurred_at: Date;
  readonly url: string;
  readonly outcome: string;
  readonly response_status: number | null;
  readonly response_body_excerpt: string | null;
  readonly error: string | null;
  readonly duration_ms: number;
  readonly next_attempt_at: Date | null;
}

/** One page, newest first; `after` is the (created_at, delivery_id) of the last row of the previous page. */
export interface DeliveryPage {
  readonly limit: number;
  readonly after?: { readonly at: Date; readonly id: string };
}

const COLUMNS = `delivery_id, target_id, account_id, project_id, instance_id, event_id, event_type, trigger, status, attempts,
  last_attempt_at, last_url, last_outcome, last_response_status, last_response_excerpt, last_error, next_attempt_at, created_at`;

/** Deliveries to one webhook (or partner), newest first. */
export async function listDeliveries(db: Pool, targetId: string, status: DeliveryStatus | undefined, page: DeliveryPage): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM deliveries.deliveries
     WHERE target_id = $1
       AND ($2::text IS NULL OR status = $2)
       AND ($3::timestamptz IS NULL OR (created_at, delivery_id) < ($3, $4))
     ORDER BY created_at DESC, delivery_id DESC
     LIMIT $5`,
    [targetId, status ?? null, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}

export async function deliveryById(db: Pool, targetId: string, deliveryId: string): Promise<DeliveryWithBody | undefined> {
  const { rows } = await db.query<DeliveryWithBody>(
    `SELECT ${COLUMNS}, body_json FROM deliveries.deliveries WHERE target_id = $1 AND delivery_id = $2`,
    [targetId, deliveryId],
  );
  return rows[0];
}

/** The attempts of a delivery, first to last. */
export async function attemptsOf(db: Pool, deliveryId: string): Promise<AttemptRow[]> {
  const { rows } = await db.query<AttemptRow>(
    `SELECT attempt_id, attempt, occurred_at, url, outcome, response_status, response_body_excerpt, error, duration_ms, next_attempt_at
     FROM deliveries.attempts WHERE delivery_id = $1
     ORDER BY attempt, occurred_at, attempt_id`,
    [deliveryId],
  );
  return rows;
}
