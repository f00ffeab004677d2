import type { Logger } from 'pino';
import type { SendCommand, UsageRecord } from '../../schemas/records.js';
import type { ClickHouse } from '../../stack/clickhouse.js';
import { createConsumer, takenInTime, topicName, topics, type ConsumedBatch, type ConsumedRecord, type Kafka, type TopicConsumer, type TopicSerdes } from '../../topics/index.js';
import { sendUsage, storedMediaUsage, type UsageRow } from './rows.js';
import { ensureUsageTable, insertUsageRows } from './table.js';

export interface UsageWriterDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly clickhouse: ClickHouse;
  readonly logger: Logger;
}

export interface RunningUsageWriter {
  readonly groupId: string;
  stop(): Promise<void>;
}

const MAX_BACKOFF_MS = 10_000;

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
  const sendTopic = topicName(topics.sendCommands, deps.serdes.prefix);
  await consumer.run((batch) => writeBatch({ clickhouse: deps.clickhouse, consumer, logger, sendTopic }, batch));
  logger.info({ groupId }, 'usage writer running');
  return { groupId, stop: () => consumer.stop() };
}

interface WriterContext {
  readonly clickhouse: ClickHouse;
  readonly consumer: TopicConsumer;
  readonly logger: Logger;
  readonly sendTopic: string;
}

async function writeBatch(ctx: WriterContext, batch: ConsumedBatch): Promise<void> {
  const last = batch.records[batch.records.length - 1];
  if (!last) return;
  const rows = batch.records.flatMap((record) => rowOf(ctx, record) ?? []);
  if (!(await insertWithRetry(ctx, batch, rows))) return;
  batch.resolve(last.offset);
  await ctx.consumer
    .commit(batch.topic, batch.partition, last.offset + 1)
    .catch((err: unknown) => ctx.logger.warn({ err }, 'offset commit failed; the batch may be written again, and counts once'));
}

function rowOf(ctx: WriterContext, record: ConsumedRecord<unknown>): UsageRow | undefined {
  if (!record.decoded.ok) {
    // The usage projection reads the same topics and dead-letters the record; here it is only skipped.
    ctx.logger.error({ err: record.decoded.error, topic: record.topic, offset: record.offset }, 'undecodable record not counted');
    return undefined;
  }
  const value = record.decoded.value;
  if (value === null) return undefined;
  if (record.topic !== ctx.sendTopic) return storedMediaUsage(value as UsageRecord);
  const command = value as SendCommand;
  return takenInTime(command, record.timestamp) ? sendUsage(command) : undefined;
}

/** Inserts until it works; false when the consumer stops or loses the partition first. */
async function insertWithRetry(ctx: WriterContext, batch: ConsumedBatch, rows: readonly UsageRow[]): Promise<boolean> {
  for (let failures = 1; batch.isRunning(); failures++) {
    try {
      await insertUsageRows(ctx.clickhouse, rows);
      return true;
    } catch (err) {
      const delayMs = Math.min(MAX_BACKOFF_MS, 100 * 2 ** failures);
      ctx.logger.warn({ err, attempt: failures, delayMs }, 'usage insert failed; retrying');
      await sleepWithHeartbeat(batch, delayMs);
    }
  }
  return false;
}

async function sleepWithHeartbeat(batch: ConsumedBatch, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until && batch.isRunning()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, until - Date.now())));
    await batch.heartbeat().catch(() => undefined);
  }
}
