import type { Logger } from 'pino';
import {
  recordsOf,
  sendToDeadLetters,
  untilSettled,
  type ConsumedBatch,
  type ConsumedRecord,
  type Kafka,
  type Producer,
  type TopicConsumer,
  type TopicSerdes,
  type TopicSpec,
} from '../../topics/index.js';
import type { Deliver } from './deliver.js';
import type { Load } from './load.js';
import { Watermarks } from './watermark.js';

/** How often settled positions are committed to the consumer group. */
const COMMIT_EVERY_MS = 200;

export interface IntakeDeps {
  readonly consumer: TopicConsumer;
  readonly groupId: string;
  readonly producer: Producer;
  readonly prefix: string;
  readonly load: Load;
  readonly logger: Logger;
}

/** What the two consumers of the dispatcher share. */
export interface ConsumerDeps extends Omit<IntakeDeps, 'consumer' | 'groupId' | 'prefix'> {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly deliver: Deliver;
}

export interface RunningIntake {
  readonly intake: Intake;
  /** Leaves the group; after `intake.close()`, so the last positions are committed. */
  stop(): Promise<void>;
}

/**
 * The bookkeeping between a consumer and the deliveries it starts: records are resolved as soon
 * as their deliveries start, so fetching goes on, while the group's committed position of each
 * partition only moves past records whose deliveries have all settled.
 */
export class Intake {
  private readonly marks = new Watermarks();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(private readonly deps: IntakeDeps) {
    this.timer = setInterval(() => void this.flush(), COMMIT_EVERY_MS);
  }

  /**
   * Runs the consumer's loop over the records of `specs` (the topics the consumer subscribed to,
   * all of values `V`): an undecodable record is dead-lettered, a tombstone settled at once,
   * and each value handed to `each`, which admits it and returns true, or returns false to leave it
   * and the rest of the batch unresolved (fetched again once the partition resumes); a value `each`
   * throws on is retried by the rule of `untilSettled`, then dead-lettered. Once stopping, a batch
   * pauses its partition and is left unresolved.
   */
  async consume<V>(specs: readonly TopicSpec<V>[], each: (record: ConsumedRecord<V>, value: V, batch: ConsumedBatch) => boolean): Promise<void> {
    await this.deps.consumer.run(async (batch) => {
      if (this.stopping) {
        batch.pause();
        return;
      }
      for (const record of specs.flatMap((spec) => recordsOf(batch, spec))) {
        if (!batch.isRunning()) return;
        if (!record.decoded.ok) this.deadLetter(record, record.decoded.error.message);
        else if (record.decoded.value === null) this.admit(record, () => []);
        else {
          const { value } = record.decoded;
          const taken = await untilSettled(async () => each(record, value, batch), {
            isRunning: () => batch.isRunning(),
            heartbeat: () => batch.heartbeat(),
            logger: this.deps.logger,
            what: 'taking a record in',
          });
          if (taken.kind === 'stopped') return;
          if (taken.kind === 'failed') this.deadLetter(record, taken.failure.message);
          else if (!taken.value) break;
        }
        batch.resolve(record.offset);
      }
      // Too much in flight: this partition waits until enough deliveries have settled.
      this.deps.load.hold(() => batch.pause());
    });
  }

  /**
   * Takes in one record and the deliveries `start` begins for it (none: settled at once). A record
   * this process already holds (fetched again after a rebalance) is not started twice.
   */
  admit(record: ConsumedRecord<unknown>, start: () => Promise<void>[]): void {
    const { topic, partition, offset } = record;
    if (!this.marks.take(topic, partition, offset)) return;
    const deliveries = start();
    if (deliveries.length === 0) {
      this.marks.settle(topic, partition, offset);
      return;
    }
    this.deps.load.add(deliveries.length);
    for (const delivery of deliveries) void delivery.then(() => this.deps.load.done(1), () => this.deps.load.done(1));
    void Promise.all(deliveries).then(
      () => this.marks.settle(topic, partition, offset),
      (err: unknown) => this.deps.logger.warn({ err, topic, partition, offset }, 'delivery not settled; the record is read again after a restart'),
    );
  }

  /** Sends a record that cannot be delivered to `gw.processors.dead` as it was, with the reason in headers. */
  deadLetter(record: ConsumedRecord<unknown>, reason: string): void {
    this.deps.logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'record dead-lettered');
    this.admit(record, () => [
      sendToDeadLetters(this.deps.producer, this.deps.prefix, record, { 'x-dead-consumer': this.deps.groupId }, reason),
    ]);
  }

  /** Commits the positions that moved; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      for (const position of this.marks.advanced()) {
        await this.deps.consumer.commit(position.topic, position.partition, position.next).then(
          () => this.marks.committed(position),
          (err: unknown) => this.deps.logger.warn({ err, ...position }, 'offset commit failed; tried again on the next flush'),
        );
      }
    });
    return this.flushing;
  }

  /** Takes no more records in; deliveries under way go on settling and being committed. */
  stopTaking(): void {
    this.stopping = true;
  }

  /** Commits what has settled, for the last time. */
  async close(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.flush();
  }
}
