import type { PoolClient } from 'pg';
import type { PaymentRecord } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import { on, type Projection } from '../runtime/projection.js';

/**
 * Each account's subscription to Pro as `gw.payments` tells it: every attempt with its latest
 * status, and the paid attempt that is the subscription (its period end, its renewals, a lapse or
 * cancellation, a renewal waiting for its pay link to be paid), and an invoice per payment made. A record seen before (a provider's
 * event delivered twice writes its id twice) changes nothing. The effects of the same records on
 * the account are the payment-effects projection's (connectors/payments/effects.ts).
 */
export const paymentsProjection: Projection = {
  name: 'payments',
  ddl: [
    `CREATE TABLE IF NOT EXISTS seen (event_id text PRIMARY KEY)`,
    `CREATE TABLE IF NOT EXISTS attempts (
      attempt_id text PRIMARY KEY,
      account_id text NOT NULL,
      provider text NOT NULL,
      method text NOT NULL,
      status text NOT NULL,
      currency text NOT NULL,
      amount bigint NOT NULL,
      period_end timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS attempts_by_account ON attempts (account_id, updated_at DESC)`,
    `CREATE TABLE IF NOT EXISTS subscriptions (
      account_id text PRIMARY KEY,
      attempt_id text NOT NULL,
      provider text NOT NULL,
      method text NOT NULL,
      status text NOT NULL,
      currency text NOT NULL,
      amount bigint NOT NULL,
      period_end timestamptz,
      started_at timestamptz NOT NULL,
      renewals integer NOT NULL,
      renewal_due_at timestamptz,
      updated_at timestamptz NOT NULL
    )`,
    // One invoice per payment that went through (a first payment or a renewal), keyed by its record.
    `CREATE TABLE IF NOT EXISTS invoices (
      event_id text PRIMARY KEY,
      account_id text NOT NULL,
      attempt_id text NOT NULL,
      provider text NOT NULL,
      method text NOT NULL,
      plan text NOT NULL,
      currency text NOT NULL,
      amount bigint NOT NULL,
      period_end timestamptz,
      paid_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS invoices_by_account ON invoices (account_id, paid_at, event_id)`,
  ],
  handlers: [
    on(topics.payments, async (tx, record) => {
      if (record === null) return;
      const { rowCount } = await tx.query(`INSERT INTO seen (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, [record.event_id]);
      if (rowCount === 0) return;
      const at = new Date(record.occurred_at);
      if (record.pay_url !== null) {
        await tx.query(`UPDATE subscriptions SET renewal_due_at = $3, updated_at = $3 WHERE account_id = $1 AND attempt_id = $2`, [record.account_id, record.attempt_id, at]);
        return;
      }
      await tx.query(
        `INSERT INTO attempts (attempt_id, account_id, provider, method, status, currency, amount, period_end, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
         ON CONFLICT (attempt_id) DO UPDATE SET status = EXCLUDED.status, period_end = EXCLUDED.period_end, updated_at = EXCLUDED.updated_at`,
        [record.attempt_id, record.account_id, record.provider, record.method, record.status, record.currency, record.amount, periodEnd(record), at],
      );
      if (record.status === 'paid') await paid(tx, record, at);
      if (record.status === 'lapsed' || record.status === 'canceled') {
        await tx.query(`UPDATE subscriptions SET status = $3, updated_at = $4 WHERE account_id = $1 AND attempt_id = $2`, [record.account_id, record.attempt_id, record.status, at]);
      }
    }),
  ],
};

/** A first payment starts the account's subscription; another payment of the same paid attempt is a renewal. */
async function paid(tx: PoolClient, record: PaymentRecord, at: Date): Promise<void> {
  await tx.query(
    `INSERT INTO invoices (event_id, account_id, attempt_id, provider, method, plan, currency, amount, period_end, paid_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [record.event_id, record.account_id, record.attempt_id, record.provider, record.method, record.plan, record.currency, record.amount, periodEnd(record), at],
  );
  await tx.query(
    `INSERT INTO subscriptions (account_id, attempt_id, provider, method, status, currency, amount, period_end, started_at, renewals, renewal_due_at, updated_at)
     VALUES ($1, $2, $3, $4, 'paid', $5, $6, $7, $8, 0, NULL, $8)
     ON CONFLICT (account_id) DO UPDATE SET
       renewals = CASE WHEN subscriptions.attempt_id = EXCLUDED.attempt_id AND subscriptions.status = 'paid' THEN subscriptions.renewals + 1 ELSE 0 END,
       started_at = CASE WHEN subscriptions.attempt_id = EXCLUDED.attempt_id THEN subscriptions.started_at ELSE EXCLUDED.started_at END,
       attempt_id = EXCLUDED.attempt_id, provider = EXCLUDED.provider, method = EXCLUDED.method, status = 'paid',
       currency = EXCLUDED.currency, amount = EXCLUDED.amount, period_end = EXCLUDED.period_end,
       renewal_due_at = NULL, updated_at = EXCLUDED.updated_at`,
    [record.account_id, record.attempt_id, record.provider, record.method, record.currency, record.amount, periodEnd(record), at],
  );
}

function periodEnd(record: PaymentRecord): Date | null {
  return record.period_end === null ? null : new Date(record.period_end);
}
