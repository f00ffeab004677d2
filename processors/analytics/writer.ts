import { startTableWriter, type RunningTableWriter, type TableWriterDeps } from '../runtime/clickhouse-table.js';
import { analyticsTables } from './tables.js';

/**
 * Writes the analyst tables, a consumer group each. Like the usage writer it shares the process's
 * ClickHouse client: with embedded chDB it runs in the process that serves the API.
 */
export async function startAnalyticsWriters(deps: TableWriterDeps): Promise<{ stop(): Promise<void> }> {
  const running: RunningTableWriter[] = [];
  try {
    for (const table of analyticsTables) running.push(await startTableWriter(deps, table, { groupId: `${deps.serdes.prefix}analytics.${table.name}` }));
  } catch (error) {
    for (const writer of running) await writer.stop();
    throw error;
  }
  return {
    async stop() {
      for (const writer of running) await writer.stop();
    },
  };
}
