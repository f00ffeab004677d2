import type { Logger } from 'pino';
import type { ClickHouse } from '../../shared/clickhouse.js';
import {
  createConsumer,
  sendToDeadLetters,
  recordsOf,
  takenInTime,
  topics,
  untilSettled,
  type ConsumedBatch,
  type ConsumedRecord,
  type Kafka,
  type Producer,
  type TopicConsumer,
  type TopicSerdes,
} from '../../topics/index.js';
import { sendUsage, storedMediaUsage, type UsageRow } from './rows.js';
import { ensureUsageTable, insertUsageRows } from './table.js';

export interface UsageWriterDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly clickhouse: ClickHouse;
  readonly producer: Producer;
  readonly logger: Logger;
}

export interface RunningUsageWriter {
  readonly groupId: string;
  stop(): Promise<void>;
}

/**
 * Writes counted usage into ClickHouse: a consumer group on the send commands and `gw.usage`
 * that inserts each batch, then commits the batch's offsets. A crash between the two writes the
 * batch again on restart, which the table's de-duplication absorbs (at least once, counted once).
 *
 * It shares the process's ClickHouse client: with embedded chDB only one process may open the
 * data folder, so the writer and the API that reads the table must run in the same process.
 */
export async function startUsageWriter(deps: UsageWriterDeps, options: { groupId?: string } = {}): Promise<RunningUsageWriter> {
  const groupId = options.groupId ?? `${deps.serdes.prefix}usage.clickhouse`;
  const logger = deps.logger.child({ component: 'usage-writer' });
  await ensureUsageTable(deps.clickhouse);
  const consumer = await createConsumer(deps.kafka, deps.serdes, {
    groupId,
    topics: [topics.sendCommands, topics.usage],
    fromBeginning: true,
  });
  const context: WriterContext = { clickhouse: deps.clickhouse, producer: deps.producer, prefix: deps.serdes.prefix, groupId, consumer, logger };
  await consumer.run((batch) => writeBatch(context, batch));
  logger.info({ groupId }, 'usage writer running');
  return { groupId, stop: () => consumer.stop() };
}

interface WriterContext {
  readonly clickhouse: ClickHouse;
  readonly producer: Producer;
  readonly prefix: string;
  readonly groupId: string;
  readonly consumer: TopicConsumer;
  readonly logger: Logger;
}

async function writeBatch(ctx: WriterContext, batch: ConsumedBatch): Promise<void> {
  const last = batch.records[batch.records.length - 1];
  if (!last) return;
  // A batch holds the records of one topic: one of the two lists is empty.
  const counted = [
    ...(await count(ctx, recordsOf(batch, topics.sendCommands), (command, record) => (takenInTime(command, record.timestamp) ? sendUsage(command) : undefined))),
    ...(await count(ctx, recordsOf(batch, topics.usage), storedMediaUsage)),
  ];
  if (!(await insert(ctx, batch, counted))) return;
  batch.resolve(last.offset);
  await ctx.consumer
    .commit(batch.topic, batch.partition, last.offset + 1)
    .catch((err: unknown) => ctx.logger.warn({ err }, 'offset commit failed; the batch may be written again, and counts once'));
}

interface Counted {
  readonly record: ConsumedRecord<unknown>;
  readonly row: UsageRow;
}

/** The rows of the records that count; an undecodable record is dead-lettered, a tombstone counts nothing. */
async function count<V>(
  ctx: WriterContext,
  records: readonly ConsumedRecord<V>[],
  rowOf: (value: V, record: ConsumedRecord<V>) => UsageRow | undefined,
): Promise<Counted[]> {
  const counted: Counted[] = [];
  for (const record of records) {
    if (!record.decoded.ok) await deadLetter(ctx, record, record.decoded.error.message);
    else if (record.decoded.value !== null) {
      const row = rowOf(record.decoded.value, record);
      if (row) counted.push({ record, row });
    }
  }
  return counted;
}

/**
 * Inserts the rows in one statement, retrying transient failures; when ClickHouse refuses them for
 * good, each is inserted alone so that only the record at fault is dead-lettered. False when the
 * consumer stops or loses the partition first.
 */
async function insert(ctx: WriterContext, batch: ConsumedBatch, counted: readonly Counted[]): Promise<boolean> {
  if (counted.length === 0) return true;
  const settled = await untilSettled(() => insertUsageRows(ctx.clickhouse, counted.map((c) => c.row)), {
    isRunning: () => batch.isRunning(),
    heartbeat: () => batch.heartbeat(),
    logger: ctx.logger,
    what: 'usage insert',
  });
  if (settled.kind !== 'failed') return settled.kind === 'done';
  const [only] = counted;
  if (counted.length === 1 && only) {
    await deadLetter(ctx, only.record, settled.failure.message);
    return true;
  }
  for (const one of counted) if (!(await insert(ctx, batch, [one]))) return false;
  return true;
}

async function deadLetter(ctx: WriterContext, record: ConsumedRecord<unknown>, reason: string): Promise<void> {
  ctx.logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'record not counted; dead-lettered');
  await sendToDeadLetters(ctx.producer, ctx.prefix, record, { 'x-dead-consumer': ctx.groupId }, reason);
}
