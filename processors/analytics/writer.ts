import { startTableWriter, type RunningTableWriter, type TableWriterDeps } from '../runtime/clickhouse-table.js';
import { analyticsTables } from './tables.js';

/**
 * Writes the analyst tables, a consumer group each. Like the usage writer it shares the process's
 * ClickHouse client: with embedded chDB it runs in the process that serves the API.
 */
export async function startAnalyticsWriters(deps: TableWriterDeps): Promise<{ stop(): Promise<void> }> {
  // Side by side: each join waits for its group to rebalance, and a new process should work soon.
  const started = await Promise.allSettled(analyticsTables.map((table) => startTableWriter(deps, table, { groupId: `${deps.serdes.prefix}analytics.${table.name}` })));
  const running: RunningTableWriter[] = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    for (const writer of running) await writer.stop();
    throw failed.reason;
  }
  return {
    async stop() {
      for (const writer of running) await writer.stop();
    },
  };
}
