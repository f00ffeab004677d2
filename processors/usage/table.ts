import type { ClickHouse } from '../../shared/clickhouse.js';
import type { UsageRow } from './rows.js';

/**
 * Counted usage for analytics and `GET /usage`. A ReplacingMergeTree keyed by what is counted:
 * a batch written again (redelivery, a writer restarted from offset zero) leaves one row per key
 * once merged, and reads use FINAL so they count it once before that. No partition key, so rows
 * of one key always meet in a merge.
 */
const USAGE_EVENTS_DDL = `CREATE TABLE IF NOT EXISTS usage_events (
  account_id String,
  project_id String,
  instance_id String,
  kind LowCardinality(String),
  event_id String,
  quantity Int64,
  occurred_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (account_id, kind, event_id)`;

export async function ensureUsageTable(clickhouse: ClickHouse): Promise<void> {
  await clickhouse.command(USAGE_EVENTS_DDL);
}

/** `2026-01-31 23:59:59.123`: the DateTime64 text form, read the same by every ClickHouse version. */
function dateTimeText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** Inserts rows with their data inline (`command` is the one call both chDB and a server take for it). */
export async function insertUsageRows(clickhouse: ClickHouse, rows: readonly UsageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const lines = rows.map((row) =>
    JSON.stringify({ ...row, project_id: row.project_id ?? '', instance_id: row.instance_id ?? '', occurred_at: dateTimeText(row.occurred_at) }),
  );
  await clickhouse.command(`INSERT INTO usage_events FORMAT JSONEachRow\n${lines.join('\n')}`);
}

export type Granularity = 'day' | 'month';

export interface UsageQuery {
  readonly accountId: string;
  /** Only this project; null for the whole account. */
  readonly projectId: string | null;
  /** Inclusive, ms. */
  readonly from: number;
  /** Exclusive, ms. */
  readonly to: number;
  readonly granularity: Granularity;
}

export interface PeriodUsage {
  /** First day of the period, `YYYY-MM-DD`. */
  readonly period: string;
  readonly messages: number;
  /** Net bytes stored in the period (removals subtract). */
  readonly mediaBytes: number;
}

const bucket: Record<Granularity, string> = { day: 'toDate', month: 'toStartOfMonth' };

/** Usage per period, only periods that have some; oldest first. */
export async function usageByPeriod(clickhouse: ClickHouse, query: UsageQuery): Promise<PeriodUsage[]> {
  // A server sends 64-bit integers as strings, chDB as numbers.
  const rows = await clickhouse.query<{ period: string; messages: string | number; media_bytes: string | number }>(
    `SELECT toString(${bucket[query.granularity]}(occurred_at)) AS period,
            sumIf(quantity, kind = 'message_sent') AS messages,
            sumIf(quantity, kind = 'media_stored') AS media_bytes
     FROM usage_events FINAL
     WHERE account_id = {account:String}
       AND ({project:String} = '' OR project_id = {project:String})
       AND occurred_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
       AND occurred_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
     GROUP BY period
     ORDER BY period`,
    { account: query.accountId, project: query.projectId ?? '', from: query.from, to: query.to },
  );
  return rows.map((row) => ({ period: row.period, messages: Number(row.messages), mediaBytes: Number(row.media_bytes) }));
}
