import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { readWatermarks } from './admin.js';
import { topicName, type TopicSpec } from './catalogue.js';
import { decodeBatch, type ConsumedBatch } from './consumer.js';
import { coPartitionedAssigner } from './co-partitioned-assigner.js';
import { heartbeating } from './group-timing.js';
import type { TopicSerdes } from './serdes.js';
import { withDeadline } from '../shared/deadline.js';

export interface PartitionOwnerOptions {
  readonly groupId: string;
  readonly topics: readonly TopicSpec<unknown>[];
  /**
   * Called after every group join with the partition numbers this member owns (the same for every
   * topic), and with none when it stops or crashes. Batches wait until it has settled.
   */
  readonly onAssignment: (partitions: readonly number[]) => Promise<void>;
  readonly logger: Logger;
}

/** A consumer-group member that owns partition p of all its topics at once; the caller owns commits. */
export interface PartitionOwner {
  run(eachBatch: (batch: ConsumedBatch) => Promise<void>): Promise<void>;
  pause(topic: string, partition: number): void;
  resume(topic: string, partition: number): void;
  seek(topic: string, partition: number, offset: number): void;
  commit(topic: string, partition: number, nextOffset: number): Promise<void>;
  /** First and next offset of each partition of a topic, as the brokers have them now. */
  watermarks(topic: string): Promise<Map<number, { low: number; high: number }>>;
  stop(): Promise<void>;
}

/**
 * How long a batch waits for its offsets' commit. A commit kafkajs cannot send while the member
 * leaves its group never settles, and the leave waits for the batch that asked: SIGTERM under load
 * hung the connector role until killed. The offsets stay where they were; the sends they cover are
 * claimed, so the next owner skips them.
 */
const COMMIT_DEADLINE_MS = 5_000;

/**
 * How long a stopping member waits to leave its group. Under load kafkajs' disconnect can wait on
 * a batch that has returned (seen with the connector role at SIGTERM, cause not found); past this
 * the process goes on stopping, and the group hands the partitions over when the session times
 * out, as after a crash.
 */
const LEAVE_DEADLINE_MS = 10_000;

/** Batches of different partitions run side by side, so one number's slow batch does not hold the others. */
const PARTITIONS_AT_ONCE = 4;

export async function createPartitionOwner(kafka: Kafka, serdes: TopicSerdes, options: PartitionOwnerOptions): Promise<PartitionOwner> {
  let owned: readonly number[] = [];
  let settled = Promise.resolve();
  const assign = (partitions: readonly number[]) => {
    owned = partitions;
    settled = settled.then(() => setUp(partitions));
  };
  // Batches wait for this: a member must never take batches of partitions it failed to set up
  // (it would drop them unresolved and fetch them again, forever). It tries again until it
  // succeeds or a newer assignment replaces this one.
  const setUp = async (partitions: readonly number[]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await options.onAssignment(partitions);
        return;
      } catch (err) {
        options.logger.error({ err, partitions, attempt }, 'assignment failed; trying again');
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 100 * 2 ** attempt)));
        if (owned !== partitions) return;
      }
    }
  };

  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    partitionAssigners: [coPartitionedAssigner(() => owned)],
  });
  // A consumer disconnected while its first join is in flight crashes on the closed connection
  // and kafkajs starts it again: a member nobody stops, left in the group after the process ends
  // (seen with a SIGTERM while the processor started). `stop` waits for that join first.
  let joined = () => {};
  const firstJoin = new Promise<void>((resolve) => (joined = resolve));
  let started = false;
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    joined();
    assign([...new Set(Object.values(payload.memberAssignment).flat())].sort((a, b) => a - b));
  });
  // A crashed member may be out of the group before it rejoins: its sessions close rather than
  // run beside the new owner's, and reopen when the next join gives the partitions back.
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    options.logger.error({ err: payload.error, restart: payload.restart }, 'connector consumer crashed');
    assign([]);
  });
  const admin = kafka.admin();
  await admin.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: options.topics.map((spec) => topicName(spec, serdes.prefix)), fromBeginning: true });

  return {
    async run(eachBatch) {
      started = true;
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: PARTITIONS_AT_ONCE,
        eachBatch: async (payload) => {
          await heartbeating(() => payload.heartbeat(), async () => {
            await settled;
            await eachBatch(await decodeBatch(payload, serdes));
          });
        },
      });
    },
    pause: (topic, partition) => consumer.pause([{ topic, partitions: [partition] }]),
    resume: (topic, partition) => consumer.resume([{ topic, partitions: [partition] }]),
    seek: (topic, partition, offset) => consumer.seek({ topic, partition, offset: String(offset) }),
    async commit(topic, partition, nextOffset) {
      await withDeadline(consumer.commitOffsets([{ topic, partition, offset: String(nextOffset) }]), COMMIT_DEADLINE_MS);
    },
    watermarks: (topic) => readWatermarks(admin, topic),
    async stop() {
      if (started) await withDeadline(firstJoin, LEAVE_DEADLINE_MS).catch(() => undefined);
      await withDeadline(consumer.disconnect(), LEAVE_DEADLINE_MS).catch((err: unknown) =>
        options.logger.warn({ err, groupId: options.groupId }, 'did not leave the group in time; its session ends it'),
      );
      assign([]);
      await settled;
      await admin.disconnect();
    },
  };
}
