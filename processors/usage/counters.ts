import type { Pool, PoolClient } from 'pg';
import type { UsageAllowance } from '../../schemas/records.js';
import type { UsageRow } from './rows.js';
import { periodOf } from './period.js';
import { defaultPlanName } from './plans.js';
import { thresholdEventId, type Threshold } from '../../events/renderers/index.js';

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
  // The stored-media add-ons the account holds: its media thresholds are of the plan's allowance plus theirs.
  `ALTER TABLE plans ADD COLUMN IF NOT EXISTS media_addons integer NOT NULL DEFAULT 0`,
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

export function allowanceOf(row: Pick<UsageRow, 'kind'>): UsageAllowance {
  return row.kind === 'message_sent' ? 'messages' : 'media_storage';
}

/** Records that the rows are counted; returns those not counted before, each once, in their order. */
export async function markCounted(tx: PoolClient, rows: readonly UsageRow[]): Promise<UsageRow[]> {
  const { rows: fresh } = await tx.query<{ kind: string; ref: string }>(
    `INSERT INTO counted (kind, ref) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING RETURNING kind, ref`,
    [rows.map((row) => row.kind), rows.map((row) => row.event_id)],
  );
  const counted = new Set(fresh.map((r) => `${r.kind}\u0000${r.ref}`));
  // `delete` is true once: a repeat within the batch is left out.
  return rows.filter((row) => counted.delete(`${row.kind}\u0000${row.event_id}`));
}

/**
 * Adds the rows to their periods' totals. Returns, for each row, what is used once it is added:
 * the messages of its period, or all media its account stores.
 */
export async function addToTotals(tx: PoolClient, rows: readonly UsageRow[]): Promise<number[]> {
  const periods = new Map<string, { account_id: string; allowance: UsageAllowance; period: string; quantity: number }>();
  for (const row of rows) {
    const key = totalKey(row);
    const total = periods.get(key) ?? { account_id: row.account_id, allowance: allowanceOf(row), period: periodOf(row.occurred_at).id, quantity: 0 };
    total.quantity += row.quantity;
    periods.set(key, total);
  }
  const totals = [...periods.values()];
  const { rows: added } = await tx.query<{ account_id: string; allowance: string; period: string; quantity: string }>(
    `INSERT INTO totals (account_id, allowance, period, quantity)
     SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::bigint[])
     ON CONFLICT (account_id, allowance, period) DO UPDATE SET quantity = totals.quantity + EXCLUDED.quantity
     RETURNING account_id, allowance, to_char(period, 'YYYY-MM-DD') AS period, quantity`,
    [totals.map((t) => t.account_id), totals.map((t) => t.allowance), totals.map((t) => t.period), totals.map((t) => t.quantity)],
  );
  const usedAfter = new Map(added.map((t) => [`${t.account_id}\u0000${t.allowance}\u0000${t.period}`, Number(t.quantity)]));
  const mediaAccounts = [...new Set(rows.filter((row) => allowanceOf(row) === 'media_storage').map((row) => row.account_id))];
  if (mediaAccounts.length > 0) {
    const { rows: stored } = await tx.query<{ account_id: string; used: string }>(
      `SELECT account_id, sum(quantity) AS used FROM totals WHERE account_id = ANY($1::text[]) AND allowance = 'media_storage' GROUP BY account_id`,
      [mediaAccounts],
    );
    for (const { account_id: accountId, used } of stored) usedAfter.set(mediaKey(accountId), Number(used));
  }
  // Walking back from the totals after the batch gives what was used after each row.
  const used = new Array<number>(rows.length);
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    const key = usedKey(row);
    const after = usedAfter.get(key)!;
    used[i] = after;
    usedAfter.set(key, after - row.quantity);
  }
  return used;
}

type Counted = Pick<UsageRow, 'account_id' | 'kind' | 'occurred_at'>;

function totalKey(row: Counted): string {
  return `${row.account_id}\u0000${allowanceOf(row)}\u0000${periodOf(row.occurred_at).id}`;
}

const mediaKey = (accountId: string) => `${accountId}\u0000media_storage`;

/** What a row's usage is measured against: the messages of its period, or the account's media of all periods. */
function usedKey(row: Counted): string {
  return allowanceOf(row) === 'messages' ? totalKey(row) : mediaKey(row.account_id);
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

/** The plans of accounts that have one. */
/** What an account's allowances are made of: its plan and the stored-media add-ons it holds. */
export interface AccountPlan {
  readonly plan: string;
  readonly mediaAddons: number;
}

export async function accountPlans(tx: PoolClient, accountIds: readonly string[]): Promise<Map<string, AccountPlan>> {
  const { rows } = await tx.query<{ account_id: string; plan: string; media_addons: number }>(
    'SELECT account_id, plan, media_addons FROM plans WHERE account_id = ANY($1::text[])',
    [accountIds],
  );
  return new Map(rows.map((row) => [row.account_id, { plan: row.plan, mediaAddons: row.media_addons }]));
}

export async function setPlan(tx: PoolClient, accountId: string, plan: string): Promise<void> {
  await tx.query('INSERT INTO plans (account_id, plan) VALUES ($1, $2) ON CONFLICT (account_id) DO UPDATE SET plan = EXCLUDED.plan', [
    accountId,
    plan,
  ]);
}

/** The account's add-ons may be written before its plan is seen: the plan is Free until then. */
export async function setMediaAddons(tx: PoolClient, accountId: string, held: number): Promise<void> {
  await tx.query(
    `INSERT INTO plans (account_id, plan, media_addons) VALUES ($1, $3, $2) ON CONFLICT (account_id) DO UPDATE SET media_addons = EXCLUDED.media_addons`,
    [accountId, held, defaultPlanName],
  );
}

export async function removePlan(tx: PoolClient, accountId: string): Promise<void> {
  await tx.query('DELETE FROM plans WHERE account_id = $1', [accountId]);
}

/** Records the thresholds as fired; returns those that had not fired before. Give each threshold once. */
export async function markFired(tx: PoolClient, reached: readonly Threshold[]): Promise<Threshold[]> {
  const { rows } = await tx.query<{ event_id: string }>(
    `INSERT INTO thresholds (account_id, allowance, period, percent, event_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::date[], $4::integer[], $5::text[])
     ON CONFLICT DO NOTHING RETURNING event_id`,
    [reached.map((t) => t.accountId), reached.map((t) => t.allowance), reached.map((t) => t.period), reached.map((t) => t.percent), reached.map(thresholdEventId)],
  );
  const fired = new Set(rows.map((row) => row.event_id));
  return reached.filter((t) => fired.has(thresholdEventId(t)));
}
