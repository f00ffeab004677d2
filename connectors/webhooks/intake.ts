import type { Logger } from 'pino';
import {
  duringRebalance,
  recordsOf,
  sendToDeadLetters,
  untilSettled,
  type ConsumedBatch,
  type RetryScope,
  type Settled,
  type ConsumedRecord,
  type Kafka,
  type Producer,
  type TopicConsumer,
  type TopicSerdes,
  type TopicSpec,
} from '../../topics/index.js';
import type { Deliver } from './deliver.js';
import type { EndpointLimiter } from './limiter.js';
import type { Load } from './load.js';
import { Watermarks } from './watermark.js';

/** One delivery of a record (or its dead letter): resolves once settled, rejects when it could not be. */
export type Work = () => Promise<void>;

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
  /** The deliver's bound per endpoint: a busy endpoint that drains fast is waited for. */
  readonly limiter: EndpointLimiter;
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

  /** Deliveries are tried until the dispatcher stops; they hold no batch to heartbeat for. */
  private readonly deliveries: RetryScope;

  constructor(private readonly deps: IntakeDeps) {
    this.timer = setInterval(() => void this.flush(), COMMIT_EVERY_MS);
    this.deliveries = { isRunning: () => !this.stopping, heartbeat: async () => undefined, logger: deps.logger, what: 'a delivery' };
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
          let taken: Settled<boolean>;
          try {
            taken = { kind: 'done', value: each(record, value, batch) };
          } catch {
            // Rare (a record `each` cannot judge): the one retry rule, with its waits, from here on.
            taken = await untilSettled(async () => each(record, value, batch), {
              isRunning: () => batch.isRunning(),
              heartbeat: () => batch.heartbeat(),
              logger: this.deps.logger,
              what: 'taking a record in',
            });
          }
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
   * Takes in one record and the deliveries `start` lists for it (none: settled at once). A record
   * this process already holds (fetched again after a rebalance) is not started twice. Each
   * delivery is tried again in this process until it settles, by the rule of `untilSettled`; a
   * record whose delivery fails for good is dead-lettered with the reason. Only a dispatcher that
   * stops leaves records unsettled, to be read again after its restart.
   */
  admit(record: ConsumedRecord<unknown>, start: () => readonly Work[]): void {
    if (!this.marks.take(record.topic, record.partition, record.offset)) return;
    void this.follow(record, start(), true);
  }

  /** Sends a record that cannot be delivered to `gw.processors.dead` as it was, with the reason in headers. */
  deadLetter(record: ConsumedRecord<unknown>, reason: string): void {
    if (!this.marks.take(record.topic, record.partition, record.offset)) return;
    void this.follow(record, [this.deadLetterWork(record, reason)], false);
  }

  private async follow(record: ConsumedRecord<unknown>, works: readonly Work[], deadLetterOnFailure: boolean): Promise<void> {
    const { topic, partition, offset } = record;
    let outcome = await this.settleAll(works);
    if (outcome.kind === 'failed' && deadLetterOnFailure) outcome = await this.settleAll([this.deadLetterWork(record, outcome.failure.message)]);
    if (outcome.kind === 'stopped') {
      this.deps.logger.warn({ topic, partition, offset }, 'delivery not settled before stopping; the record is read again after a restart');
      return;
    }
    if (outcome.kind === 'failed') {
      this.deps.logger.error({ err: outcome.failure, topic, partition, offset }, 'record could not be dead-lettered; passed over');
    }
    this.marks.settle(topic, partition, offset);
  }

  /** Runs every work to its end: the first failure, else stopped if one was left, else done. */
  private async settleAll(works: readonly Work[]): Promise<Settled<void>> {
    this.deps.load.add(works.length);
    // Most records have one delivery: no array of outcomes to gather for it.
    if (works.length === 1) return this.settleOne(works[0]!);
    const outcomes = await Promise.all(works.map((work) => this.settleOne(work)));
    return outcomes.find((o) => o.kind === 'failed') ?? outcomes.find((o) => o.kind === 'stopped') ?? { kind: 'done', value: undefined };
  }

  private async settleOne(work: Work): Promise<Settled<void>> {
    try {
      return await untilSettled(work, this.deliveries);
    } finally {
      this.deps.load.done(1);
    }
  }

  private deadLetterWork(record: ConsumedRecord<unknown>, reason: string): Work {
    return async () => {
      this.deps.logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'record dead-lettered');
      await sendToDeadLetters(this.deps.producer, this.deps.prefix, record, { 'x-dead-consumer': this.deps.groupId }, reason);
    };
  }

  /** Commits the positions that moved, every partition's in one request; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const advanced = this.marks.advanced();
      if (advanced.length === 0) return;
      await this.deps.consumer.commitAll(advanced.map(({ topic, partition, next }) => ({ topic, partition, nextOffset: next }))).then(
        () => advanced.forEach((position) => this.marks.committed(position)),
        (err: unknown) => this.deps.logger[duringRebalance(err) ? 'debug' : 'warn']({ err, partitions: advanced.length }, 'offset commit failed; tried again on the next flush'),
      );
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
