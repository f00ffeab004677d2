import type { Pool } from 'pg';
import { asAccountId, asEventId, newId, type AccountId } from '../../schemas/ids.js';
import type { PaymentMethod, PaymentRecord, PaymentStatus } from '../../schemas/records.js';
import type { Currency } from '../../shared/currency.js';
import { withDeadline } from '../../shared/deadline.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { topics, type Producer } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import { gatewayError } from '../errors.js';

/** Monthly price of Pro in each currency, in minor units (our choice; docs/connect.md). */
export const PRO_PRICES: Readonly<Record<Currency, number>> = { BRL: 14_900, USD: 2_900, EUR: 2_900 };
/** A paid period. */
const PERIOD_MS = 30 * 24 * 3_600_000;

/** Spec 4.5: Pix exists only in BRL. */
export function methodsFor(currency: Currency): PaymentMethod[] {
  return currency === 'BRL' ? ['card', 'pix'] : ['card'];
}

export type AttemptStatus = PaymentStatus | 'processing';

export interface Attempt {
  readonly attemptId: string;
  readonly accountId: AccountId;
  readonly connectionId: string | null;
  readonly method: PaymentMethod;
  readonly status: AttemptStatus;
  readonly currency: Currency;
  readonly amount: number;
  readonly periodEnd: number | null;
}

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
];

/**
 * The sandbox payment provider (the default): a stand-in for the payment processor that keeps its
 * attempts in a table of its own, as a processor keeps them on its servers, and confirms them
 * when the component's sandbox form posts the client secret. Every fact (opened, replaced, paid,
 * failed) is also written to `gw.payments`.
 */
export class SandboxPayments {
  readonly provider = 'sandbox' as const;
  readonly publishableKey = null;

  constructor(
    private readonly pool: Pool,
    private readonly producer: Producer,
  ) {}

  /**
   * Opens a checkout of Pro by `method`: 422 `method_unavailable` for Pix outside BRL, 409
   * `payment_pending` while an earlier attempt is being confirmed; an earlier open attempt is
   * canceled (spec 4.5 rule 4). The caller refuses `already_paid` before.
   */
  async checkout(input: { accountId: AccountId; connectionId: string; method: PaymentMethod; currency: Currency }, now: number) {
    if (!methodsFor(input.currency).includes(input.method)) throw gatewayError('method_unavailable');
    const open = (await this.attempts(input.accountId)).filter((a) => a.status === 'pending' || a.status === 'processing');
    if (open.some((a) => a.status === 'processing')) throw gatewayError('payment_pending');
    for (const previous of open) await this.settle(previous, 'canceled', now, 'replaced by a new checkout');
    const clientSecret = secretToken(`sandbox_${newId('pi')}_secret_`, 24);
    const attempt: Attempt = {
      attemptId: newId('pay'),
      accountId: input.accountId,
      connectionId: input.connectionId,
      method: input.method,
      status: 'pending',
      currency: input.currency,
      amount: PRO_PRICES[input.currency],
      periodEnd: null,
    };
    await this.pool.query(
      `INSERT INTO api.payment_attempts (attempt_id, account_id, connection_id, method, status, currency, amount, secret_hash, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, to_timestamp($8 / 1000.0), to_timestamp($8 / 1000.0))`,
      [attempt.attemptId, attempt.accountId, attempt.connectionId, attempt.method, attempt.currency, attempt.amount, hashSecret(clientSecret), now],
    );
    await this.publish(attempt, 'pending', now, null);
    return { client_secret: clientSecret, attempt_id: attempt.attemptId, method: attempt.method, status: 'pending' as const };
  }

  /** The account's latest attempt. */
  async latest(accountId: string): Promise<Attempt | undefined> {
    return (await this.attempts(accountId))[0];
  }

  /**
   * What the processor answers when the customer confirms (the sandbox form): `paid`, `failed`, or
   * `processing` (being confirmed). Only an open attempt moves; the attempt, or none for an unknown secret.
   */
  async confirm(clientSecret: string, outcome: 'paid' | 'failed' | 'processing', now: number): Promise<Attempt | undefined> {
    const { rows } = await this.pool.query<AttemptRow>(`SELECT ${COLUMNS} FROM api.payment_attempts WHERE secret_hash = $1`, [hashSecret(clientSecret)]);
    const attempt = rows[0] && attemptOf(rows[0]);
    if (attempt === undefined || (attempt.status !== 'pending' && attempt.status !== 'processing')) return attempt;
    if (outcome === 'processing') {
      await this.pool.query(`UPDATE api.payment_attempts SET status = 'processing', updated_at = to_timestamp($2 / 1000.0) WHERE attempt_id = $1`, [attempt.attemptId, now]);
      return { ...attempt, status: 'processing' };
    }
    return this.settle(attempt, outcome, now, outcome === 'failed' ? 'refused by the sandbox' : null);
  }

  private async settle(attempt: Attempt, status: PaymentStatus, now: number, reason: string | null): Promise<Attempt> {
    const periodEnd = status === 'paid' ? now + PERIOD_MS : null;
    await this.pool.query(
      `UPDATE api.payment_attempts SET status = $2, period_end = to_timestamp($3 / 1000.0), updated_at = to_timestamp($4 / 1000.0) WHERE attempt_id = $1`,
      [attempt.attemptId, status, periodEnd, now],
    );
    const settled = { ...attempt, status, periodEnd };
    await this.publish(settled, status, now, reason);
    return settled;
  }

  private async publish(attempt: Attempt, status: PaymentStatus, now: number, reason: string | null): Promise<void> {
    const record: PaymentRecord = {
      event_id: asEventId(newId('pmt')),
      occurred_at: now,
      account_id: attempt.accountId,
      project_id: null,
      instance_id: null,
      connection_id: attempt.connectionId as PaymentRecord['connection_id'],
      attempt_id: attempt.attemptId,
      provider: this.provider,
      method: attempt.method,
      status,
      plan: 'pro',
      currency: attempt.currency,
      amount: attempt.amount,
      period_end: attempt.periodEnd,
      reason,
    };
    await withDeadline(this.producer.send(topics.payments, [{ key: record.account_id, value: record }]), WRITE_DEADLINE_MS);
  }

  private async attempts(accountId: string): Promise<Attempt[]> {
    const { rows } = await this.pool.query<AttemptRow>(
      `SELECT ${COLUMNS} FROM api.payment_attempts WHERE account_id = $1 ORDER BY created_at DESC, attempt_id DESC LIMIT 20`,
      [accountId],
    );
    return rows.map(attemptOf);
  }
}

const COLUMNS = 'attempt_id, account_id, connection_id, method, status, currency, amount, period_end';

interface AttemptRow {
  attempt_id: string;
  account_id: string;
  connection_id: string | null;
  method: PaymentMethod;
  status: AttemptStatus;
  currency: Currency;
  amount: string;
  period_end: Date | null;
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
  };
}
