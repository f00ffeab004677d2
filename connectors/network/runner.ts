import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { createPartitionOwner, recordsOf, topicName, topics, type ConsumedBatch, type Kafka, type PartitionOwner, type Producer, type TopicSerdes, type TopicSpec } from '../../topics/index.js';
import { CommandBatches } from './commands.js';
import type { ConnectorCommands, NetworkConnector } from './connector.js';
import { QueryAnswers } from './query-answers.js';
import type { NumberQuery } from '../../schemas/records.js';
import { ExecutedSends } from './executed.js';
import { OwnedPartitions } from './partitions.js';
import type { SendMetrics } from './metrics.js';
import { Sends } from './sends.js';
import { KeyedSerial } from '../../shared/serial.js';
import { withDeadline } from '../../shared/deadline.js';
import { OwnedSessions } from './sessions.js';
import { OtpKeys, type OpenedOtpCodes } from './otp-keys.js';

export interface ConnectorRunnerDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly connectors: readonly NetworkConnector[];
  readonly otp: OpenedOtpCodes;
  readonly metrics: SendMetrics;
}

const PURGE_EVERY_MS = 3_600_000;
/** OTP keys past their lifetime go within a minute: a code must not outlive its expiry by much. */
const OTP_PURGE_EVERY_MS = 60_000;

/**
 * The connector role: one member of the `connector` group. It owns partition p of the state topic,
 * the send topic and the connectors' command topics together (see `assigner.ts`), opens the
 * sessions of the numbers in its partitions, executes their sends once, and writes what the
 * sessions observe to the log.
 */
/**
 * How long a stopping connector waits for its numbers' last facts (statuses, receipts) to be
 * written. Under load a write was seen never to settle at SIGTERM (cause not found), holding the
 * process until it was killed; past this the process stops, saying so.
 */
const DRAIN_DEADLINE_MS = 15_000;

export class ConnectorRunner {
  /** Partitions are consumed side by side; the batches of one partition number (states, commands) one at a time. */
  private readonly partitionWork = new KeyedSerial();
  private readonly executed: ExecutedSends;
  private readonly partitions: OwnedPartitions;
  private readonly sessions: OwnedSessions;
  private readonly commands: CommandBatches;
  private readonly statesTopic: string;
  /** The command topics of the connectors and the queries of the API, co-partitioned with the sends. */
  private readonly controlTopics: readonly TopicSpec<unknown>[];
  private owner?: PartitionOwner;
  private purgeTimer?: NodeJS.Timeout;
  private otpPurgeTimer?: NodeJS.Timeout;
  private readonly otpKeys: OtpKeys;

  constructor(private readonly deps: ConnectorRunnerDeps) {
    const { producer, logger } = deps;
    const prefix = deps.serdes.prefix;
    const writer = new KeyedSerial();
    const control = () => this.owner!;
    this.executed = new ExecutedSends(deps.pool);
    this.otpKeys = new OtpKeys(deps.pool);
    this.statesTopic = topicName(topics.instances, prefix);
    const sendTopic = topicName(topics.sendCommands, prefix);
    const answers = new QueryAnswers({ producer, logger, sessionOf: (id) => this.sessions.numberOf(id)?.session });
    // The API's queries are answered by the session of any connector, in order with the number's sends.
    const queries: ConnectorCommands<NumberQuery> = { topic: topics.numberQueries, apply: (query) => answers.apply(query) };
    const controls = [...deps.connectors.flatMap((c) => (c.commands ? [c.commands] : [])), queries];
    this.controlTopics = controls.map((c) => c.topic);
    const sends: Sends = new Sends({ executed: this.executed, writer, producer, logger, metrics: deps.metrics, otp: deps.otp, numberOf: (id) => this.sessions.numberOf(id) });
    this.sessions = new OwnedSessions({
      connectors: deps.connectors,
      producer,
      writer,
      logger,
      isOpened: (p) => this.partitions.isOpened(p),
      writeReceipt: (id, fact, current) => sends.writeReceipt(id, fact, current),
    });
    this.partitions = new OwnedPartitions({
      control: {
        pause: (topic, p) => control().pause(topic, p),
        resume: (topic, p) => control().resume(topic, p),
        seek: (topic, p, offset) => control().seek(topic, p, offset),
        watermarks: (topic) => control().watermarks(topic),
      },
      statesTopic: this.statesTopic,
      commandTopics: [sendTopic, ...controls.map((c) => topicName(c.topic, prefix))],
      logger,
      opened: (p) => this.sessions.openPartition(p),
      released: (p) => this.sessions.closePartition(p),
    });
    this.commands = new CommandBatches({
      controls,
      execute: (commands, headers) => sends.send(commands, headers),
      knows: (id) => this.sessions.numberOf(id) !== undefined,
      isLoaded: (p) => this.partitions.isLoaded(p),
      statesMayBeBehind: (p, record) => this.partitions.statesMayBeBehind(p, record),
      pause: (p) => this.partitions.pauseCommands(p),
      commit: (topic, p, next) => control().commit(topic, p, next),
      producer,
      prefix,
      logger,
    });
  }

  async start(): Promise<void> {
    // Side by side: each is a few round trips to Postgres, and the group waits for them all. The
    // executed sends and the OTP keys share a schema, so they go one after the other.
    await Promise.all([
      ...this.deps.connectors.map((connector) => connector.prepare?.()),
      this.executed.ensureSchema().then(() => this.otpKeys.ensureSchema()),
    ]);
    const purge = () => void this.executed.purge().catch((err: unknown) => this.deps.logger.warn({ err }, 'purging executed sends failed'));
    purge();
    this.purgeTimer = setInterval(purge, PURGE_EVERY_MS).unref();
    const purgeOtp = () => void this.otpKeys.purgeExpired().catch((err: unknown) => this.deps.logger.warn({ err }, 'purging expired OTP keys failed'));
    purgeOtp();
    this.otpPurgeTimer = setInterval(purgeOtp, OTP_PURGE_EVERY_MS).unref();
    this.owner = await createPartitionOwner(this.deps.kafka, this.deps.serdes, {
      groupId: `${this.deps.serdes.prefix}connector`,
      topics: [topics.instances, topics.sendCommands, ...this.controlTopics],
      onAssignment: async (partitions) => {
        await this.partitions.assign(partitions);
        this.deps.logger.info({ partitions }, 'connector partitions assigned');
      },
      logger: this.deps.logger,
    });
    await this.owner.run((batch) => this.onBatch(batch));
  }

  /** The partitions this member owns now. */
  ownedPartitions(): number[] {
    return this.partitions.owned();
  }

  async stop(): Promise<void> {
    clearInterval(this.purgeTimer);
    clearInterval(this.otpPurgeTimer);
    await this.owner?.stop();
    await withDeadline(this.sessions.drain(), DRAIN_DEADLINE_MS).catch((err: unknown) =>
      this.deps.logger.error({ err }, 'the numbers\' last facts were not all written before stopping'),
    );
  }

  private onBatch(batch: ConsumedBatch): Promise<void> {
    return this.partitionWork.run(String(batch.partition), () => this.applyBatch(batch));
  }

  private async applyBatch(batch: ConsumedBatch): Promise<void> {
    const last = batch.records[batch.records.length - 1];
    if (!this.partitions.has(batch.partition) || !last) return;
    if (batch.topic !== this.statesTopic) return this.commands.apply(batch);
    await this.partitions.applyStates(batch.partition, recordsOf(batch, topics.instances), (record) => this.sessions.applyState(record));
    batch.resolve(last.offset);
  }
}
