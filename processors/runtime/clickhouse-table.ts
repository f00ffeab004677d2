import type { Logger } from 'pino';
import type { ClickHouse } from '../../shared/clickhouse.js';
import { gathering } from './gathering.js';
import {
  createConsumer,
  groupCommits,
  liveFetchGathered,
  recordsOf,
  sendToDeadLetters,
  topicName,
  untilSettled,
  type ConsumedBatch,
  type ConsumedRecord,
  type FetchSettings,
  type GroupCommits,
  type Kafka,
  type Producer,
  type TopicSerdes,
  type TopicSpec,
} from '../../topics/index.js';

/** A row as ClickHouse's `JSONEachRow` reads it (a DateTime64 as `dateTimeText`). */
export type TableRow = Readonly<Record<string, string | number | null>>;

/** One input topic of a table and the rows each of its records adds. */
export interface TableInput<V> {
  readonly topic: TopicSpec<V>;
  /** The rows the record adds; none for one that adds nothing. Tombstones add nothing and never come here. */
  rowsOf(value: V, record: ConsumedRecord<V>): readonly TableRow[];
}

/**
 * An analyst table of ClickHouse projected from topics, rebuilt by replay like a Postgres
 * projection (`replayTable`). Its engine must absorb a row written twice (a ReplacingMergeTree
 * keyed by what the row counts, read with FINAL): writers are at least once, and a replay's
 * catch-up writes again what the live writer wrote while the replay swapped in.
 */
export interface ClickHouseTable {
  readonly name: string;
  /** `CREATE TABLE IF NOT EXISTS` of the table under `table`: its name, or a replay's. */
  ddl(table: string): string;
  readonly inputs: readonly TableInput<unknown>[];
  /** As `Projection.changelogCovers`: inputs whose lost records a changelog among the inputs holds. */
  readonly changelogCovers?: readonly TopicSpec<unknown>[];
}

export function tableInput<V>(topic: TopicSpec<V>, rowsOf: TableInput<V>['rowsOf']): TableInput<unknown> {
  const input: TableInput<V> = { topic, rowsOf };
  return input;
}

/** `2026-01-31 23:59:59.123`: the DateTime64 text form, read the same by every ClickHouse version. */
export function dateTimeText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

export const quoteTable = (name: string) => `\`${name.replaceAll('`', '``')}\``;

/** Inserts rows with their data inline (`command` is the one call both chDB and a server take for it). */
export async function insertRows(clickhouse: ClickHouse, table: string, rows: readonly TableRow[]): Promise<void> {
  if (rows.length === 0) return;
  await clickhouse.command(`INSERT INTO ${quoteTable(table)} FORMAT JSONEachRow\n${rows.map((row) => JSON.stringify(row)).join('\n')}`);
}

export interface TableWriterDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly clickhouse: ClickHouse;
  readonly producer: Producer;
  readonly logger: Logger;
}

export interface TableWriterOptions {
  readonly groupId: string;
  /** The table written: the table's name unless a replay builds its own. */
  readonly into?: string;
  readonly fetch?: FetchSettings;
  /** Called once the rows of a partition's records up to `nextOffset` are in the table. */
  readonly onWritten?: (topic: string, partition: number, nextOffset: number) => void;
}

export interface RunningTableWriter {
  readonly groupId: string;
  stop(): Promise<void>;
}

/**
 * Live fetches of a table writer: the broker holds a fetch until a megabyte has come or the group
 * timing's wait (500 ms) has passed, and the batches of all partitions go in one insert. ClickHouse
 * makes a part of each insert and merges parts in the background: an insert per batch of each
 * partition, at 50 sends/s, kept an embedded chDB's threads at a third of a core.
 */
const liveTableFetch: FetchSettings = { ...liveFetchGathered, minBytes: 1024 * 1024 };

/** How often a writer commits its group offsets; a crash writes again at most this much, which the engine absorbs. */
const COMMIT_EVERY_MS = 1_000;

/**
 * Writes a table from its inputs: a consumer group that inserts the rows of the batches of each
 * fetch together, then commits their offsets. A crash between the two writes the batches again on
 * restart, which the table's engine absorbs (at least once, counted once).
 */
export async function startTableWriter(deps: TableWriterDeps, table: ClickHouseTable, options: TableWriterOptions): Promise<RunningTableWriter> {
  const into = options.into ?? table.name;
  const logger = deps.logger.child({ component: 'table-writer', table: into });
  await deps.clickhouse.command(table.ddl(into));
  const consumer = await createConsumer(deps.kafka, deps.serdes, {
    groupId: options.groupId,
    topics: table.inputs.map((input) => input.topic),
    fromBeginning: true,
    fetch: options.fetch ?? liveTableFetch,
  });
  const inputs = new Map(table.inputs.map((input) => [topicName(input.topic, deps.serdes.prefix), input]));
  const commits = groupCommits((positions) => consumer.commitAll(positions), {
    everyMs: COMMIT_EVERY_MS,
    logger,
    failed: 'offset commit failed; the batches may be written again, and count once',
  });
  const context: WriterContext = { ...deps, into, inputs, groupId: options.groupId, commits, logger, onWritten: options.onWritten };
  await consumer.run(gathering((batches: readonly ConsumedBatch[]) => writeBatches(context, batches)));
  logger.info({ groupId: options.groupId }, 'table writer running');
  return {
    groupId: options.groupId,
    async stop() {
      await commits.leaving();
      await consumer.stop();
    },
  };
}

interface WriterContext extends TableWriterDeps {
  readonly into: string;
  readonly inputs: ReadonlyMap<string, TableInput<unknown>>;
  readonly groupId: string;
  readonly commits: GroupCommits;
  readonly onWritten: TableWriterOptions['onWritten'];
}

/** Writes the rows of batches of one fetch in one insert, then marks them done. */
async function writeBatches(ctx: WriterContext, batches: readonly ConsumedBatch[]): Promise<void> {
  const parts: { batch: ConsumedBatch; nextOffset: number }[] = [];
  const rows: RecordRows[] = [];
  for (const batch of batches) {
    const last = batch.records[batch.records.length - 1];
    const input = ctx.inputs.get(batch.topic);
    if (!last || !input) continue;
    rows.push(...(await rowsOf(ctx, input, recordsOf(batch, input.topic))));
    parts.push({ batch, nextOffset: last.offset + 1 });
  }
  const lease = { isRunning: () => parts.every((p) => p.batch.isRunning()), heartbeat: () => parts[0]!.batch.heartbeat() };
  if (parts.length === 0 || !(await insert(ctx, lease, rows))) return;
  for (const { batch, nextOffset } of parts) {
    batch.resolve(nextOffset - 1);
    ctx.onWritten?.(batch.topic, batch.partition, nextOffset);
  }
  await ctx.commits.add(parts.map(({ batch, nextOffset }) => ({ topic: batch.topic, partition: batch.partition, nextOffset })));
}

interface RecordRows {
  readonly record: ConsumedRecord<unknown>;
  readonly rows: readonly TableRow[];
}

/** The rows of the records; a record undecodable, or whose rows cannot be made (a time out of range), is dead-lettered. */
async function rowsOf<V>(ctx: WriterContext, input: TableInput<V>, records: readonly ConsumedRecord<V>[]): Promise<RecordRows[]> {
  const out: RecordRows[] = [];
  for (const record of records) {
    if (!record.decoded.ok) await deadLetter(ctx, record, record.decoded.error.message);
    else if (record.decoded.value !== null) {
      const made = madeRows(input, record.decoded.value, record);
      if (made instanceof Error) await deadLetter(ctx, record, made.message);
      else if (made.length > 0) out.push({ record, rows: made });
    }
  }
  return out;
}

function madeRows<V>(input: TableInput<V>, value: V, record: ConsumedRecord<V>): readonly TableRow[] | Error {
  try {
    return input.rowsOf(value, record);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Inserts the rows in one statement, retrying transient failures; when ClickHouse refuses them for
 * good, each record's rows are inserted alone so that only the record at fault is dead-lettered.
 * False when the consumer stops or loses a partition first.
 */
async function insert(ctx: WriterContext, lease: Lease, rows: readonly RecordRows[]): Promise<boolean> {
  if (rows.length === 0) return true;
  const settled = await untilSettled(() => insertRows(ctx.clickhouse, ctx.into, rows.flatMap((r) => r.rows)), {
    ...lease,
    logger: ctx.logger,
    what: `${ctx.into} insert`,
  });
  if (settled.kind !== 'failed') return settled.kind === 'done';
  const [only] = rows;
  if (rows.length === 1 && only) {
    await deadLetter(ctx, only.record, settled.failure.message);
    return true;
  }
  for (const one of rows) if (!(await insert(ctx, lease, [one]))) return false;
  return true;
}

/** The batches an insert is for: it stops retrying once one of them is no longer this member's. */
interface Lease {
  isRunning(): boolean;
  heartbeat(): Promise<void>;
}

async function deadLetter(ctx: WriterContext, record: ConsumedRecord<unknown>, reason: string): Promise<void> {
  ctx.logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'record not written; dead-lettered');
  await sendToDeadLetters(ctx.producer, ctx.serdes.prefix, record, { 'x-dead-consumer': ctx.groupId }, reason);
}
