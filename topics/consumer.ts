import type { Consumer as KafkaConsumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { topicName, type TopicSpec } from './catalogue.js';
import type { GroupPosition } from './group-commits.js';
import { heartbeating } from './group-timing.js';
import { shareAssigner, type PartitionShare } from './partition-share.js';
import type { TopicSerdes } from './serdes.js';
import { SerdeError, type RecordSerde } from '../schemas/serde.js';

export type Decoded<V> =
  | { readonly ok: true; readonly value: V | null }
  | { readonly ok: false; readonly error: SerdeError };

export interface ConsumedRecord<V> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly timestamp: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The bytes as read, kept for dead-lettering. */
  readonly raw: Buffer | null;
  readonly decoded: Decoded<V>;
}

export interface ConsumedBatch {
  /** The topic's name on the cluster: the consumer's `prefix` and the name of the spec it subscribed to. */
  readonly topic: string;
  readonly prefix: string;
  readonly partition: number;
  /** Offset after the last record the broker had when this batch was fetched. */
  readonly highWatermark: number;
  /** Offset of the first record fetched: `records` may start later when superseded records were left out (`latestPerKey`). */
  readonly firstOffset: number;
  readonly records: readonly ConsumedRecord<unknown>[];
  heartbeat(): Promise<void>;
  /** Marks records up to `offset` as processed, so the next fetch starts after it. */
  resolve(offset: number): void;
  /** False once the consumer is stopping or lost this partition: stop work on the batch. */
  isRunning(): boolean;
  /**
   * Stops fetching this partition; the records after the last resolved offset come again once the
   * returned function resumes it (a delay tier waiting for its head record to fall due).
   */
  pause(): () => void;
}

/**
 * The records of `batch` with the value type of `spec`, the topic they were subscribed with: the
 * consumer decoded them with the schema registered for it. A batch of another topic has none of
 * them (`[]`), so a consumer of several topics asks for each in turn.
 */
export function recordsOf<V>(batch: ConsumedBatch, spec: TopicSpec<V>): readonly ConsumedRecord<V>[] {
  if (batch.topic !== topicName(spec, batch.prefix)) return [];
  // The one place a decoded value gets its type: the serde of this topic name is the spec's schema.
  return batch.records as readonly ConsumedRecord<V>[];
}

export interface TopicConsumer {
  /** Runs `eachBatch` for each fetched batch of one partition; returns once the consumer runs. */
  run(eachBatch: (batch: ConsumedBatch) => Promise<void>): Promise<void>;
  /** Moves the position of a partition; the next batch starts at `offset`. */
  seek(topic: string, partition: number, offset: number): void;
  /** Commits consumer-group offsets (the next offset to read), for lag and restarts. */
  commit(topic: string, partition: number, nextOffset: number): Promise<void>;
  /** Commits the positions of several partitions in one request. */
  commitAll(positions: readonly GroupPosition[]): Promise<void>;
  stop(): Promise<void>;
}

export interface ConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly TopicSpec<unknown>[];
  /** Where a group without committed offsets starts. */
  readonly fromBeginning: boolean;
  /** How much a fetch asks for; live consumers keep kafkajs' sizes and the group timing's wait. */
  readonly fetch?: FetchSettings;
  /**
   * Compacted topics read for each key's latest value (a replay of a changelog): a record that a
   * later one of its batch with the same key supersedes is left out without being decoded, as if
   * compaction had run.
   */
  readonly latestPerKey?: readonly TopicSpec<unknown>[];
  /** Only these partitions of each topic (a replay's members split its backlog so: `PartitionShare`). */
  readonly share?: PartitionShare;
}

export interface FetchSettings {
  readonly maxBytes: number;
  readonly maxBytesPerPartition: number;
  readonly minBytes: number;
  /** The group timing's wait unless set (`groupTiming`). */
  readonly maxWaitTimeInMs?: number;
  /** Batches of different partitions handled at once (1 unless set): decoding one overlaps the database's work on another. */
  readonly partitionsAtOnce?: number;
}

/**
 * Fetches for reading a backlog from offset zero (replay, its bench): large enough that a batch of
 * a partition holds tens of thousands of small records, so the per-batch costs (a transaction,
 * a few statements) are paid rarely.
 */
export const backlogFetch: FetchSettings = {
  maxBytes: 64 * 1024 * 1024,
  maxBytesPerPartition: 16 * 1024 * 1024,
  minBytes: 1,
  maxWaitTimeInMs: 250,
  // Two: Postgres applies one partition's batch while the next is decoded (1.3 times the records/s of one at a time, bench:replay; three gains nothing on two cores).
  partitionsAtOnce: 2,
};

/** kafkajs' own fetch sizes, which the live consumers keep. */
const kafkajsSizes = { maxBytes: 10 * 1024 * 1024, maxBytesPerPartition: 1024 * 1024, minBytes: 1 } as const;

/**
 * Fetches of a live consumer whose partitions' batches may be handled side by side (order is kept
 * within a partition): kafkajs' sizes, four partitions at once, so one partition's round trips do
 * not hold up the records of the others.
 */
export const liveFetchApart: FetchSettings = {
  ...kafkajsSizes,
  partitionsAtOnce: 4,
};

/**
 * Fetches of a live consumer that gathers the batches of one fetch (`gathering` in the processor's
 * runner): kafkajs' sizes, and every partition's batch handed out at once, so that they can be
 * applied together; the handler keeps them in order.
 */
export const liveFetchGathered: FetchSettings = {
  ...kafkajsSizes,
  partitionsAtOnce: 64,
};

/**
 * Fetches of a live consumer that pauses a partition and resumes it moments later (the
 * dispatcher's intake, holding back a backlog for a busy endpoint): kafkajs fetches a resumed
 * partition only in its next fetch, once the one in flight returns, and an idle member's fetch
 * waits on the broker. At the group timing's 500 ms, a backlog for one fast endpoint drained at
 * 2,016 deliveries/s; at 100 ms, 8,870/s, as with room for the whole backlog (bench:webhooks).
 * The cost is an idle member's ten polls a second instead of two.
 */
export const liveFetchResuming: FetchSettings = {
  ...kafkajsSizes,
  maxWaitTimeInMs: 100,
};

/** A consumer-group member that decodes through the registry; the caller owns commits. */
export async function createConsumer(kafka: Kafka, serdes: TopicSerdes, options: ConsumerOptions): Promise<TopicConsumer> {
  const { partitionsAtOnce = 1, ...fetch } = options.fetch ?? {};
  const consumer: KafkaConsumer = kafka.consumer({
    groupId: options.groupId,
    ...(options.share ? { partitionAssigners: [shareAssigner(options.share)] } : {}),
    ...fetch,
  });
  await consumer.connect();
  const latestOnly = new Set((options.latestPerKey ?? []).map((spec) => topicName(spec, serdes.prefix)));
  await consumer.subscribe({
    topics: options.topics.map((spec) => topicName(spec, serdes.prefix)),
    fromBeginning: options.fromBeginning,
  });

  return {
    async run(eachBatch) {
      await consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: partitionsAtOnce,
        eachBatchAutoResolve: false,
        eachBatch: async (payload: EachBatchPayload) => {
          await heartbeating(() => payload.heartbeat(), async () => eachBatch(await decodeBatch(payload, serdes, latestOnly.has(payload.batch.topic))));
        },
      });
    },
    seek(topic, partition, offset) {
      consumer.seek({ topic, partition, offset: String(offset) });
    },
    async commit(topic, partition, nextOffset) {
      await consumer.commitOffsets([{ topic, partition, offset: String(nextOffset) }]);
    },
    async commitAll(positions) {
      await consumer.commitOffsets(positions.map(({ topic, partition, nextOffset }) => ({ topic, partition, offset: String(nextOffset) })));
    },
    stop: () => consumer.disconnect(),
  };
}

/**
 * A fetched batch, its values decoded through the registry as they are first read: a handler that
 * leaves the rest of a batch (a paused partition, fetched again once it resumes) pays nothing for
 * the records it did not read. The writers' schemas are fetched first, so reading is synchronous;
 * an undecodable record carries its error. With `latestOnly`, records whose key comes again later
 * in the batch are left out.
 */
export async function decodeBatch(payload: EachBatchPayload, serdes: TopicSerdes, latestOnly = false): Promise<ConsumedBatch> {
  const { batch } = payload;
  const serde = serdes.byTopicName(batch.topic);
  const records: ConsumedRecord<unknown>[] = [];
  const superseded = latestOnly ? supersededIn(batch.messages) : undefined;
  for (let at = 0; at < batch.messages.length; at++) {
    if (superseded?.has(at)) continue;
    const message = batch.messages[at]!;
    const fetching = message.value === null ? undefined : serde?.ready(message.value);
    if (fetching !== undefined) await fetching;
    records.push(new FetchedRecord(batch.topic, batch.partition, message, serde));
  }
  return {
    topic: batch.topic,
    prefix: serdes.prefix,
    partition: batch.partition,
    highWatermark: Number(batch.highWatermark),
    firstOffset: Number(batch.messages[0]?.offset ?? batch.highWatermark),
    records,
    heartbeat: () => payload.heartbeat(),
    resolve: (offset) => payload.resolveOffset(String(offset)),
    isRunning: () => payload.isRunning() && !payload.isStale(),
    pause: () => payload.pause(),
  };
}

class FetchedRecord implements ConsumedRecord<unknown> {
  readonly offset: number;
  readonly key: string | null;
  readonly timestamp: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly raw: Buffer | null;
  private value: Decoded<unknown> | undefined;

  constructor(
    readonly topic: string,
    readonly partition: number,
    message: KafkaMessage,
    private readonly serde: RecordSerde<unknown> | undefined,
  ) {
    this.offset = Number(message.offset);
    this.key = message.key?.toString('utf8') ?? null;
    this.timestamp = Number(message.timestamp);
    this.headers = headerStrings(message.headers);
    this.raw = message.value;
  }

  get decoded(): Decoded<unknown> {
    return (this.value ??= decodeValue(this.raw, this.serde, this.topic));
  }
}

function decodeValue(raw: Buffer | null, serde: RecordSerde<unknown> | undefined, topic: string): Decoded<unknown> {
  if (raw === null) return { ok: true, value: null };
  if (!serde) return { ok: false, error: new SerdeError(`no serde for topic ${topic}`) };
  try {
    return { ok: true, value: serde.decodeKnown(raw) };
  } catch (error) {
    if (!(error instanceof SerdeError)) throw error;
    return { ok: false, error };
  }
}

/** Positions of the messages a later one with the same key supersedes (keyless ones never are). */
function supersededIn(messages: readonly { readonly key?: Buffer | null }[]): Set<number> {
  const last = new Map<string, number>();
  const superseded = new Set<number>();
  for (let at = 0; at < messages.length; at++) {
    const key = messages[at]!.key;
    if (key === null || key === undefined) continue;
    const text = key.toString('latin1');
    const before = last.get(text);
    if (before !== undefined) superseded.add(before);
    last.set(text, at);
  }
  return superseded;
}

const noHeaders: Readonly<Record<string, string>> = Object.freeze({});

/** Most records carry no headers: they share one frozen empty object. */
function headerStrings(headers: Record<string, unknown> | undefined): Readonly<Record<string, string>> {
  let out: Record<string, string> | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (Buffer.isBuffer(value)) (out ??= {})[name] = value.toString('utf8');
    else if (typeof value === 'string') (out ??= {})[name] = value;
  }
  return out ?? noHeaders;
}
