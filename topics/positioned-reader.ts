import { AssignerProtocol, type Consumer, type Kafka, type PartitionAssigner } from 'kafkajs';
import { topicName, type TopicSpec } from './catalogue.js';
import { decodeBatch, type ConsumedBatch } from './consumer.js';
import { heartbeating } from './group-timing.js';
import type { TopicSerdes } from './serdes.js';

export interface PositionedReaderOptions {
  /** A group of this reader alone: nothing is committed to it, and it is deleted on stop. */
  readonly groupId: string;
  readonly topic: Pick<TopicSpec<unknown>, 'name'>;
  /** The partitions to read, each with the offset to start at (the next offset to read). */
  readonly from: ReadonlyMap<number, number>;
}

/** Reads chosen partitions of a topic from chosen offsets, keeping its own positions. */
export interface PositionedReader {
  /** The next offset to read in a partition of the reader. */
  position(partition: number): number | undefined;
  stop(): Promise<void>;
}

const POSITIONED = 'Positioned';

/**
 * kafkajs has no manual assignment: a group that only this reader joins stands in for it. Its
 * assigner hands every member the chosen partitions, and after every join (the first, and any
 * rejoin after a crash or a session timeout, which would otherwise restart at the latest offsets
 * since nothing is committed) the reader seeks each partition back to where it stands.
 * `eachBatch` sees only records at or after the reader's position, in order; the position moves
 * past a batch once the handler has returned.
 */
export async function readFromPositions(
  kafka: Kafka,
  serdes: TopicSerdes,
  options: PositionedReaderOptions,
  eachBatch: (batch: ConsumedBatch) => Promise<void> | void,
): Promise<PositionedReader> {
  const topic = topicName(options.topic, serdes.prefix);
  const positions = new Map(options.from);
  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    partitionAssigners: [chosenPartitions([...positions.keys()])],
  });
  consumer.on(consumer.events.GROUP_JOIN, () => {
    for (const [partition, offset] of positions) consumer.seek({ topic, partition, offset: String(offset) });
  });
  await consumer.connect();
  // An offset the log no longer holds (retention) restarts the partition at its first record.
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: (payload) => heartbeating(() => payload.heartbeat(), async () => {
      const batch = await decodeBatch(payload, serdes);
      const from = positions.get(batch.partition);
      if (from === undefined || batch.records.length === 0) return;
      const records = batch.records.filter((record) => record.offset >= from);
      const last = batch.records[batch.records.length - 1]!.offset;
      if (records.length > 0) await eachBatch({ ...batch, records });
      positions.set(batch.partition, Math.max(from, last + 1));
      if (batch.isRunning()) batch.resolve(last);
    }),
  });

  return {
    position: (partition) => positions.get(partition),
    async stop() {
      await consumer.disconnect();
      const admin = kafka.admin();
      await admin.connect();
      try {
        await admin.deleteGroups([options.groupId]).catch(() => undefined);
      } finally {
        await admin.disconnect();
      }
    },
  };
}

/** Gives each member all the chosen partitions: in a group of one reader, a member left over from a crash must not take them. */
function chosenPartitions(partitions: readonly number[]): PartitionAssigner {
  return () => ({
    name: POSITIONED,
    version: 1,
    async assign({ members, topics }) {
      const assignment = Object.fromEntries(topics.map((topic) => [topic, [...partitions]]));
      return members.map(({ memberId }) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }),
      }));
    },
    protocol({ topics }) {
      return { name: POSITIONED, metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }) };
    },
  });
}
