import { backlogFetch, deleteGroup, topicName, watermarks } from '../../topics/index.js';
import { quoteTable, startTableWriter, type ClickHouseTable, type RunningTableWriter, type TableWriterDeps } from './clickhouse-table.js';
import { LogGapsError, logGaps, type LogGap, type ReplayResult } from './log-gaps.js';

const inputTopics = (deps: Pick<TableWriterDeps, 'serdes'>, table: ClickHouseTable) => table.inputs.map((input) => topicName(input.topic, deps.serdes.prefix));

/** The gaps of a table's inputs, less those a changelog among its inputs covers. */
export async function tableGaps(deps: Pick<TableWriterDeps, 'kafka' | 'serdes'>, table: ClickHouseTable): Promise<LogGap[]> {
  const covered = new Set((table.changelogCovers ?? []).map((topic) => topicName(topic, deps.serdes.prefix)));
  return logGaps(deps.kafka, inputTopics(deps, table).filter((topic) => !covered.has(topic)));
}

/** Where a writer is: the next offset of each partition whose rows are in its table. */
type Positions = Map<string, number>;
const at = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * Rebuilds a ClickHouse table from offset zero of its inputs into `<table>__replay_<stamp>`, with
 * a consumer group of its own and large fetches, up to the high watermarks read at the start;
 * then swaps it in (`EXCHANGE TABLES`, atomic: readers see the old table or the new one) and
 * catches the same group up to the log as it is after the swap, into the swapped-in table, so
 * what the live writer put in the old table meanwhile is written again there (the engine absorbs
 * the doubles). The old table is dropped last. The live writer writes by name, so from the swap
 * on it writes into the rebuilt table.
 */
export async function replayTable(deps: TableWriterDeps, table: ClickHouseTable, options: { deadlineMs?: number; allowGaps?: boolean } = {}): Promise<ReplayResult> {
  const started = Date.now();
  const deadline = started + (options.deadlineMs ?? 30 * 60_000);
  const stamp = `${started}`;
  const replica = `${table.name}__replay_${stamp}`;
  const logger = deps.logger.child({ table: table.name, replay: replica });
  const gaps = await tableGaps(deps, table);
  if (gaps.length > 0 && options.allowGaps !== true) throw new LogGapsError([{ projection: table.name, gaps }]);
  if (gaps.length > 0) logger.warn({ gaps }, 'replaying without what the log no longer holds');
  const topics = inputTopics(deps, table);
  const groupId = `${deps.serdes.prefix}replay.${table.name}.${stamp}`;
  const positions: Positions = new Map();
  const write = (into: string) =>
    startTableWriter(deps, table, { groupId, into, fetch: backlogFetch, onWritten: (topic, partition, next) => positions.set(at(topic, partition), next) });

  const firsts = await heldFrom(deps, topics);
  let writer: RunningTableWriter | undefined = await write(replica);
  let swapped = false;
  let swapStarted = Date.now();
  let swapEnded = swapStarted;
  try {
    await caughtUp(deps, replica, topics, positions, deadline);
    await writer.stop();
    writer = undefined;
    swapStarted = Date.now();
    const existed = await tableExists(deps, table.name);
    await deps.clickhouse.command(existed ? `EXCHANGE TABLES ${quoteTable(table.name)} AND ${quoteTable(replica)}` : `RENAME TABLE ${quoteTable(replica)} TO ${quoteTable(table.name)}`);
    swapped = true;
    writer = await write(table.name);
    await caughtUp(deps, replica, topics, positions, deadline);
    await writer.stop();
    writer = undefined;
    if (existed) await deps.clickhouse.command(`DROP TABLE IF EXISTS ${quoteTable(replica)}`);
    swapEnded = Date.now();
  } catch (error) {
    await writer?.stop().catch(() => undefined);
    if (!swapped) await deps.clickhouse.command(`DROP TABLE IF EXISTS ${quoteTable(replica)}`).catch(() => undefined);
    throw error;
  }
  await deleteGroup(deps.kafka, groupId).catch((err: unknown) => logger.warn({ err, groupId }, 'could not delete the replay group'));
  let records = 0;
  for (const [key, first] of firsts) records += Math.max(0, (positions.get(key) ?? first) - first);
  const result = { projection: table.name, records, durationMs: Date.now() - started, swapMs: swapEnded - swapStarted, gaps };
  logger.info(result, 'replay swapped in');
  return result;
}

/** The first offset held of each partition of the topics. */
async function heldFrom(deps: Pick<TableWriterDeps, 'kafka'>, topics: readonly string[]): Promise<Positions> {
  const firsts: Positions = new Map();
  for (const topic of topics) for (const [partition, { low }] of await watermarks(deps.kafka, topic)) firsts.set(at(topic, partition), low);
  return firsts;
}

/**
 * Waits until the writer has written everything the topics hold now: each partition up to its
 * high watermark, one whose records retention deleted from its first record held.
 */
async function caughtUp(deps: Pick<TableWriterDeps, 'kafka'>, replica: string, topics: readonly string[], positions: Positions, deadline: number): Promise<void> {
  const targets = await Promise.all(topics.map(async (topic) => [topic, await watermarks(deps.kafka, topic)] as const));
  for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
    let behind = 0;
    for (const [topic, held] of targets) {
      for (const [partition, { low, high }] of held) behind += Math.max(0, high - Math.max(low, positions.get(at(topic, partition)) ?? low));
    }
    if (behind === 0) return;
    if (Date.now() > deadline) throw new Error(`${replica} is still ${behind} records behind the log at the deadline`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

async function tableExists(deps: Pick<TableWriterDeps, 'clickhouse'>, name: string): Promise<boolean> {
  const rows = await deps.clickhouse.query<{ n: string | number }>(`SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = {name:String}`, { name });
  return Number(rows[0]?.n ?? 0) > 0;
}
