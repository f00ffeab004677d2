import type { Pool, PoolClient } from 'pg';
import type { UsageAllowance } from '../../schemas/records.js';
import type { UsageRow } from './rows.js';
import { thresholdEventId, type Threshold } from './thresholds.js';

/** Name of the Postgres projection, and so of the schema holding these tables. */
export const usageProjectionName = 'usage';

/**
 * The counters behind thresholds and `GET /me/entitlements`. `counted` holds what was counted
 * (message ids, media usage ids) so a repeat counts once; `totals` the net quantity per account,
 * allowance and month; `thresholds` the thresholds fired, so each fires once a period.
 */
export const countersDdl: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS plans (
    account_id text PRIMARY KEY,
    plan text NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS counted (
    kind text NOT NULL,
    ref text NOT NULL,
    PRIMARY KEY (kind, ref)
  )`,
  `CREATE TABLE IF NOT EXISTS totals (
    account_id text NOT NULL,
    allowance text NOT NULL,
    period date NOT NULL,
    quantity bigint NOT NULL,
    PRIMARY KEY (account_id, allowance, period)
  )`,
  `CREATE TABLE IF NOT EXISTS thresholds (
    account_id text NOT NULL,
    allowance text NOT NULL,
    period date NOT NULL,
    percent integer NOT NULL,
    event_id text NOT NULL,
    PRIMARY KEY (account_id, allowance, period, percent)
  )`,
];

export function allowanceOf(row: UsageRow): UsageAllowance {
  return row.kind === 'message_sent' ? 'messages' : 'media_storage';
}

/** Records that `row` is counted; false when it was counted before. */
export async function markCounted(tx: PoolClient, row: UsageRow): Promise<boolean> {
  const { rowCount } = await tx.query('INSERT INTO counted (kind, ref) VALUES ($1, $2) ON CONFLICT DO NOTHING', [row.kind, row.event_id]);
  return rowCount === 1;
}

/** Adds the row to its period's total; returns what is used after it: the period's messages, or all media stored. */
export async function addToTotals(tx: PoolClient, row: UsageRow, period: string): Promise<number> {
  const allowance = allowanceOf(row);
  const { rows } = await tx.query<{ quantity: string }>(
    `INSERT INTO totals (account_id, allowance, period, quantity) VALUES ($1, $2, $3, $4)
     ON CONFLICT (account_id, allowance, period) DO UPDATE SET quantity = totals.quantity + EXCLUDED.quantity
     RETURNING quantity`,
    [row.account_id, allowance, period, row.quantity],
  );
  if (allowance === 'messages') return Number(rows[0]?.quantity);
  const { rows: stored } = await tx.query<{ used: string }>(
    `SELECT sum(quantity) AS used FROM totals WHERE account_id = $1 AND allowance = 'media_storage'`,
    [row.account_id],
  );
  return Number(stored[0]?.used);
}

export interface AccountUsage {
  /** Sends in the period. */
  readonly messages: number;
  /** Media stored now: every period's net bytes. */
  readonly mediaBytes: number;
}

const UNDEFINED_TABLE = '42P01';

/** The live counters of an account, for the API; zero before the usage projection first ran. */
export async function accountUsage(pool: Pool, accountId: string, period: string): Promise<AccountUsage> {
  try {
    const { rows } = await pool.query<{ messages: string; media_bytes: string }>(
      `SELECT coalesce(sum(quantity) FILTER (WHERE allowance = 'messages' AND period = $2), 0) AS messages,
              coalesce(sum(quantity) FILTER (WHERE allowance = 'media_storage'), 0) AS media_bytes
       FROM ${usageProjectionName}.totals WHERE account_id = $1`,
      [accountId, period],
    );
    return { messages: Number(rows[0]?.messages ?? 0), mediaBytes: Number(rows[0]?.media_bytes ?? 0) };
  } catch (error) {
    if ((error as { code?: string }).code === UNDEFINED_TABLE) return { messages: 0, mediaBytes: 0 };
    throw error;
  }
}

export async function accountPlan(tx: PoolClient, accountId: string): Promise<string | undefined> {
  const { rows } = await tx.query<{ plan: string }>('SELECT plan FROM plans WHERE account_id = $1', [accountId]);
  return rows[0]?.plan;
}

export async function setPlan(tx: PoolClient, accountId: string, plan: string): Promise<void> {
  await tx.query('INSERT INTO plans (account_id, plan) VALUES ($1, $2) ON CONFLICT (account_id) DO UPDATE SET plan = EXCLUDED.plan', [
    accountId,
    plan,
  ]);
}

export async function removePlan(tx: PoolClient, accountId: string): Promise<void> {
  await tx.query('DELETE FROM plans WHERE account_id = $1', [accountId]);
}

/** Records the thresholds as fired; returns those that had not fired before. */
export async function markFired(tx: PoolClient, reached: readonly Threshold[]): Promise<Threshold[]> {
  const fresh: Threshold[] = [];
  for (const t of reached) {
    const { rowCount } = await tx.query(
      `INSERT INTO thresholds (account_id, allowance, period, percent, event_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [t.accountId, t.allowance, t.period, t.percent, thresholdEventId(t)],
    );
    if (rowCount === 1) fresh.push(t);
  }
  return fresh;
}
