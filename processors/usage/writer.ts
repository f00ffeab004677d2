import { startTableWriter, type RunningTableWriter, type TableWriterDeps } from '../runtime/clickhouse-table.js';
import { usageEventsTable } from './table.js';

export type UsageWriterDeps = TableWriterDeps;
export type RunningUsageWriter = RunningTableWriter;

/**
 * Writes counted usage into ClickHouse's `usage_events` (`usageEventsTable`): a consumer group on
 * the send commands and `gw.usage`.
 *
 * It shares the process's ClickHouse client: with embedded chDB only one process may open the
 * data folder, so the writer and the API that reads the table must run in the same process.
 */
export function startUsageWriter(deps: UsageWriterDeps, options: { groupId?: string } = {}): Promise<RunningUsageWriter> {
  return startTableWriter(deps, usageEventsTable('live'), { groupId: options.groupId ?? `${deps.serdes.prefix}usage.clickhouse` });
}
