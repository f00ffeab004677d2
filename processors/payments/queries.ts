import type { Pool } from 'pg';
import type { AccountId } from '../../schemas/ids.js';

/** The paid attempt that is an account's subscription to Pro, as the payments projection keeps it. */
export interface SubscriptionRow {
  readonly attemptId: string;
  readonly provider: string;
  readonly method: string;
  /** paid (the plan is Pro until `periodEnd`), lapsed (a renewal was not paid) or canceled. */
  readonly status: 'paid' | 'lapsed' | 'canceled';
  readonly currency: string;
  readonly amount: number;
  readonly periodEnd: Date | null;
  readonly startedAt: Date;
  readonly renewals: number;
  /** When a renewal's pay link was sent and not paid since. */
  readonly renewalDueAt: Date | null;
}

export interface LatestAttempt {
  readonly attemptId: string;
  readonly status: string;
  readonly method: string;
  readonly updatedAt: Date;
}

/** The account's subscription, if it ever paid, and its latest payment attempt, if it made one. */
export async function subscriptionOf(pool: Pool, accountId: AccountId): Promise<{ subscription: SubscriptionRow | undefined; latest: LatestAttempt | undefined }> {
  const [subscriptions, attempts] = await Promise.all([
    pool.query<{
      attempt_id: string; provider: string; method: string; status: SubscriptionRow['status']; currency: string; amount: string;
      period_end: Date | null; started_at: Date; renewals: number; renewal_due_at: Date | null;
    }>(
      `SELECT attempt_id, provider, method, status, currency, amount, period_end, started_at, renewals, renewal_due_at
       FROM payments.subscriptions WHERE account_id = $1`,
      [accountId],
    ),
    pool.query<{ attempt_id: string; status: string; method: string; updated_at: Date }>(
      `SELECT attempt_id, status, method, updated_at FROM payments.attempts WHERE account_id = $1 ORDER BY updated_at DESC, attempt_id DESC LIMIT 1`,
      [accountId],
    ),
  ]);
  const row = subscriptions.rows[0];
  const attempt = attempts.rows[0];
  return {
    subscription: row && {
      attemptId: row.attempt_id,
      provider: row.provider,
      method: row.method,
      status: row.status,
      currency: row.currency,
      amount: Number(row.amount),
      periodEnd: row.period_end,
      startedAt: row.started_at,
      renewals: row.renewals,
      renewalDueAt: row.renewal_due_at,
    },
    latest: attempt && { attemptId: attempt.attempt_id, status: attempt.status, method: attempt.method, updatedAt: attempt.updated_at },
  };
}

/** A payment that went through, as the invoice of its period. */
export interface InvoiceRow {
  /** The `gw.payments` record of the payment. */
  readonly eventId: string;
  /** 1 for the account's first invoice, counting in the order paid. */
  readonly number: number;
  readonly attemptId: string;
  readonly provider: string;
  readonly method: string;
  readonly plan: string;
  readonly currency: string;
  readonly amount: number;
  readonly periodEnd: Date | null;
  readonly paidAt: Date;
}

/** The account's invoices, newest first. */
export async function invoicesOf(pool: Pool, accountId: string): Promise<InvoiceRow[]> {
  const { rows } = await pool.query<{
    event_id: string; number: string; attempt_id: string; provider: string; method: string; plan: string; currency: string; amount: string;
    period_end: Date | null; paid_at: Date;
  }>(
    `SELECT event_id, row_number() OVER (ORDER BY paid_at, event_id) AS number, attempt_id, provider, method, plan, currency, amount, period_end, paid_at
     FROM payments.invoices WHERE account_id = $1 ORDER BY paid_at DESC, event_id DESC`,
    [accountId],
  );
  return rows.map((row) => ({
    eventId: row.event_id,
    number: Number(row.number),
    attemptId: row.attempt_id,
    provider: row.provider,
    method: row.method,
    plan: row.plan,
    currency: row.currency,
    amount: Number(row.amount),
    periodEnd: row.period_end,
    paidAt: row.paid_at,
  }));
}
