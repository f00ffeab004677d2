import type { ClickHouse } from '../../shared/clickhouse.js';
import { takenInTime, topics } from '../../topics/index.js';
import { dateTimeText, tableInput, type ClickHouseTable, type TableRow } from '../runtime/clickhouse-table.js';
import { sendUsage, sentUsage, storedMediaUsage, type UsageRow } from './rows.js';

export const usageEventsName = 'usage_events';

/**
 * Counted usage for analytics and `GET /usage`. A ReplacingMergeTree keyed by what is counted:
 * a batch written again (redelivery, a writer restarted from offset zero, a replay's catch-up)
 * leaves one row per key once merged, and reads use FINAL so they count it once before that. No
 * partition key, so rows of one key always meet in a merge.
 */
const ddl = (table: string) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  account_id String,
  project_id String,
  instance_id String,
  kind LowCardinality(String),
  event_id String,
  quantity Int64,
  occurred_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (account_id, kind, event_id)`;

const rowOf = (row: UsageRow): TableRow => ({ ...row, project_id: row.project_id ?? '', instance_id: row.instance_id ?? '', occurred_at: dateTimeText(row.occurred_at) });
const rows = (row: UsageRow | undefined): TableRow[] => (row ? [rowOf(row)] : []);

/**
 * The table counts what the Postgres usage counters count: the sends the log took in time, by
 * message id, and stored media. Live, the sends come from their commands; a replay reads the
 * history's changelog `gw.messages.state` beside them (each message counts once whichever it is
 * read from), so it rebuilds sends older than the commands' 7 days; `gw.usage` is kept for ever.
 */
export function usageEventsTable(mode: 'live' | 'replay'): ClickHouseTable {
  return {
    name: usageEventsName,
    ddl,
    inputs: [
      tableInput(topics.sendCommands, (command, record) => rows(takenInTime(command, record.timestamp) ? sendUsage(command) : undefined)),
      tableInput(topics.usage, (record) => rows(storedMediaUsage(record))),
      ...(mode === 'replay' ? [tableInput(topics.messageStates, (state) => rows(sentUsage(state)))] : []),
    ],
    changelogCovers: mode === 'replay' ? [topics.sendCommands] : [],
  };
}

export async function ensureUsageTable(clickhouse: ClickHouse): Promise<void> {
  await clickhouse.command(ddl(usageEventsName));
}

export type Granularity = 'day' | 'month';

export interface UsageQuery {
  readonly accountId: string;
  /** Only this project; null for the whole account. */
  readonly projectId: string | null;
  /** Only this number; null for every number. */
  readonly instanceId: string | null;
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
       AND ({instance:String} = '' OR instance_id = {instance:String})
       AND occurred_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
       AND occurred_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
     GROUP BY period
     ORDER BY period`,
    { account: query.accountId, project: query.projectId ?? '', instance: query.instanceId ?? '', from: query.from, to: query.to },
  );
  return rows.map((row) => ({ period: row.period, messages: Number(row.messages), mediaBytes: Number(row.media_bytes) }));
}

/** Sends and stored media per period of a set of projects (a partner's connected ones), summed; only periods that have some, oldest first. */
export async function projectsUsageByPeriod(
  clickhouse: ClickHouse,
  query: { readonly projects: readonly { readonly accountId: string; readonly projectId: string }[]; readonly from: number; readonly to: number; readonly granularity: Granularity },
): Promise<PeriodUsage[]> {
  if (query.projects.length === 0) return [];
  const rows = await clickhouse.query<{ period: string; messages: string | number; media_bytes: string | number }>(
    `SELECT toString(${bucket[query.granularity]}(occurred_at)) AS period,
            sumIf(quantity, kind = 'message_sent') AS messages,
            sumIf(quantity, kind = 'media_stored') AS media_bytes
     FROM usage_events FINAL
     WHERE account_id IN {accounts:Array(String)} AND project_id IN {projects:Array(String)}
       AND occurred_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
       AND occurred_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
     GROUP BY period
     ORDER BY period`,
    { accounts: [...new Set(query.projects.map((p) => p.accountId))], projects: query.projects.map((p) => p.projectId), from: query.from, to: query.to },
  );
  return rows.map((row) => ({ period: row.period, messages: Number(row.messages), mediaBytes: Number(row.media_bytes) }));
}
