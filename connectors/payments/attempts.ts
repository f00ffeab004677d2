import type { Pool } from 'pg';
import { asAccountId, asEventId, newId, type AccountId, type ConnectionId } from '../../schemas/ids.js';
import type { PaymentRecord, PaymentStatus } from '../../schemas/records.js';
import type { Currency } from '../../shared/currency.js';
import { withDeadline } from '../../shared/deadline.js';
import { hashSecret } from '../../shared/secret-token.js';
import { topics, type Producer } from '../../topics/index.js';
import type { MailLocale } from '../email/templates.js';
import { PaymentRefused, PRO_PRICES, type Attempt, type AttemptStatus, type CheckoutInput, type ProviderName } from './provider.js';

/** How long a write to the log may take before the caller answers 503. */
const PUBLISH_DEADLINE_MS = 10_000;

export const paymentsDdl = [
  `CREATE TABLE IF NOT EXISTS api.payment_attempts (
    attempt_id text PRIMARY KEY,
    account_id text NOT NULL,
    connection_id text,
    method text NOT NULL,
    status text NOT NULL,
    currency text NOT NULL,
    amount bigint NOT NULL,
    secret_hash text NOT NULL UNIQUE,
    period_end timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS payment_attempts_by_account ON api.payment_attempts (account_id, created_at)`,
  // The processor's ids: its subscription (renewals and lapses name it) and its customer (reused by the next checkout).
  `ALTER TABLE api.payment_attempts ADD COLUMN IF NOT EXISTS provider text NOT NULL DEFAULT 'sandbox'`,
  `ALTER TABLE api.payment_attempts ADD COLUMN IF NOT EXISTS provider_ref text`,
  `ALTER TABLE api.payment_attempts ADD COLUMN IF NOT EXISTS customer_ref text`,
  `ALTER TABLE api.payment_attempts ADD COLUMN IF NOT EXISTS email text`,
  `ALTER TABLE api.payment_attempts ADD COLUMN IF NOT EXISTS locale text NOT NULL DEFAULT 'en'`,
  `CREATE UNIQUE INDEX IF NOT EXISTS payment_attempts_by_ref ON api.payment_attempts (provider, provider_ref)`,
];

/** An attempt as a fact about it left it, and the id of that fact's record on `gw.payments`. */
export interface Settled {
  readonly attempt: Attempt;
  readonly recordId: string;
}

/** A new attempt as a provider opens it: the client secret is kept only as its hash. */
export interface OpenAttempt {
  readonly input: CheckoutInput;
  readonly clientSecret: string;
  readonly providerRef: string | null;
  readonly customerRef: string | null;
}

/**
 * The attempts of one provider in Postgres, and every fact about them on `gw.payments`: a row
 * answers the component's polls, the record is the history replay and analysts read. A record is
 * written before the row changes, so a failed write leaves the attempt as it was and the caller
 * (the component, the processor's webhook) tries again.
 */
export class PaymentAttempts {
  constructor(
    private readonly pool: Pool,
    private readonly producer: Producer,
    private readonly provider: ProviderName,
  ) {}

  async open(opening: OpenAttempt, now: number): Promise<Attempt> {
    const { input } = opening;
    const attempt: Attempt = {
      attemptId: newId('pay'),
      accountId: input.accountId,
      connectionId: input.connectionId,
      method: input.method,
      status: 'pending',
      currency: input.currency,
      amount: PRO_PRICES[input.currency],
      periodEnd: null,
      email: input.email,
      locale: input.locale,
    };
    await this.publish(attempt, { status: 'pending', reason: null }, now);
    await this.pool.query(
      `INSERT INTO api.payment_attempts
         (attempt_id, account_id, connection_id, method, status, currency, amount, secret_hash, provider, provider_ref, customer_ref, email, locale, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12, to_timestamp($13 / 1000.0), to_timestamp($13 / 1000.0))`,
      [
        attempt.attemptId,
        attempt.accountId,
        attempt.connectionId,
        attempt.method,
        attempt.currency,
        attempt.amount,
        hashSecret(opening.clientSecret),
        this.provider,
        opening.providerRef,
        opening.customerRef,
        attempt.email,
        attempt.locale,
        now,
      ],
    );
    return attempt;
  }

  /**
   * Spec 4.5 rule 4: a new checkout cancels the account's open attempt, unless one is being
   * confirmed (409 `payment_pending`). `cancelAtProcessor` ends it where the money is.
   */
  async cancelOpen(accountId: AccountId, now: number, cancelAtProcessor: (attempt: Attempt) => Promise<void>): Promise<void> {
    const open = (await this.of(accountId)).filter((a) => a.status === 'pending' || a.status === 'processing');
    if (open.some((a) => a.status === 'processing')) throw new PaymentRefused('payment_pending');
    for (const previous of open) {
      await cancelAtProcessor(previous);
      await this.settle(previous, { status: 'canceled', reason: 'replaced by a new checkout' }, now);
    }
  }

  /** The account's attempts, newest first. */
  async of(accountId: AccountId): Promise<Attempt[]> {
    return this.select(`account_id = $1 ORDER BY created_at DESC, attempt_id DESC LIMIT 20`, [accountId]);
  }

  async bySecret(clientSecret: string): Promise<Attempt | undefined> {
    return (await this.select(`secret_hash = $1`, [hashSecret(clientSecret)]))[0];
  }

  async byRef(providerRef: string): Promise<Attempt | undefined> {
    return (await this.select(`provider = $1 AND provider_ref = $2`, [this.provider, providerRef]))[0];
  }

  /** The processor's customer of an earlier checkout of the account, to reuse. */
  async customerRefOf(accountId: AccountId): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ customer_ref: string }>(
      `SELECT customer_ref FROM api.payment_attempts WHERE account_id = $1 AND provider = $2 AND customer_ref IS NOT NULL ORDER BY created_at DESC LIMIT 1`,
      [accountId, this.provider],
    );
    return rows[0]?.customer_ref;
  }

  /** The provider's ref of an attempt (its subscription), to cancel it there. */
  async refOf(attemptId: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ provider_ref: string | null }>(`SELECT provider_ref FROM api.payment_attempts WHERE attempt_id = $1`, [attemptId]);
    return rows[0]?.provider_ref ?? undefined;
  }

  /** Being confirmed: not a fact of the payment's outcome, so no record; only the row shows it. */
  async markProcessing(attempt: Attempt, now: number): Promise<Attempt> {
    await this.pool.query(`UPDATE api.payment_attempts SET status = 'processing', updated_at = to_timestamp($2 / 1000.0) WHERE attempt_id = $1`, [attempt.attemptId, now]);
    return { ...attempt, status: 'processing' };
  }

  /**
   * Records an outcome and moves the row. `eventId` names the processor's event, so a
   * redelivered event writes a record with the same id (readers keep the first).
   */
  async settle(attempt: Attempt, change: { status: PaymentStatus; periodEnd?: number | null; reason?: string | null; eventId?: string }, now: number): Promise<Settled> {
    const settled: Attempt = { ...attempt, status: change.status, periodEnd: change.periodEnd === undefined ? attempt.periodEnd : change.periodEnd };
    const recordId = await this.publish(settled, { status: change.status, reason: change.reason ?? null, eventId: change.eventId }, now);
    await this.pool.query(
      `UPDATE api.payment_attempts SET status = $2, period_end = to_timestamp($3 / 1000.0), updated_at = to_timestamp($4 / 1000.0) WHERE attempt_id = $1`,
      [attempt.attemptId, settled.status, settled.periodEnd, now],
    );
    return { attempt: settled, recordId };
  }

  /** A renewal to pay by the link `payUrl`, which the payments processor e-mails: it does not move the attempt's row. */
  async renewalDue(attempt: Attempt, payUrl: string, now: number, eventId: string): Promise<string> {
    return this.publish(attempt, { status: 'pending', reason: 'renewal sent for payment by e-mail', eventId, payUrl }, now);
  }

  /** Writes the record of a fact and answers its id. */
  private async publish(
    attempt: Attempt,
    fact: { status: PaymentStatus; reason: string | null; eventId?: string | undefined; payUrl?: string },
    now: number,
  ): Promise<string> {
    const { status, reason, eventId } = fact;
    const record: PaymentRecord = {
      event_id: asEventId(eventId === undefined ? newId('pmt') : `pmt_${eventId}`),
      occurred_at: now,
      account_id: attempt.accountId,
      project_id: null,
      instance_id: null,
      connection_id: attempt.connectionId as ConnectionId | null,
      attempt_id: attempt.attemptId,
      provider: this.provider,
      method: attempt.method,
      status,
      plan: 'pro',
      currency: attempt.currency,
      amount: attempt.amount,
      period_end: attempt.periodEnd,
      reason,
      pay_url: fact.payUrl ?? null,
      email: attempt.email,
      locale: attempt.locale,
    };
    await withDeadline(this.producer.send(topics.payments, [{ key: record.account_id, value: record }]), PUBLISH_DEADLINE_MS);
    return record.event_id;
  }

  private async select(where: string, values: unknown[]): Promise<Attempt[]> {
    const { rows } = await this.pool.query<AttemptRow>(`SELECT ${COLUMNS} FROM api.payment_attempts WHERE ${where}`, values);
    return rows.map(attemptOf);
  }
}

const COLUMNS = 'attempt_id, account_id, connection_id, method, status, currency, amount, period_end, email, locale';

interface AttemptRow {
  attempt_id: string;
  account_id: string;
  connection_id: string | null;
  method: Attempt['method'];
  status: AttemptStatus;
  currency: Currency;
  amount: string;
  period_end: Date | null;
  email: string | null;
  locale: MailLocale;
}

function attemptOf(row: AttemptRow): Attempt {
  return {
    attemptId: row.attempt_id,
    accountId: asAccountId(row.account_id),
    connectionId: row.connection_id,
    method: row.method,
    status: row.status,
    currency: row.currency,
    amount: Number(row.amount),
    periodEnd: row.period_end?.getTime() ?? null,
    email: row.email,
    locale: row.locale,
  };
}
