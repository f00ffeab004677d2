import { CompressionTypes, Partitioners, type Kafka, type Message, type Producer as KafkaProducer, type RecordMetadata } from 'kafkajs';
import type { TopicSpec } from './catalogue.js';
import { classify, GatewayFailure, hasProtocolError } from './failure.js';
import { openMessageLimits, type MessageLimits } from './message-limits.js';
import { BATCH_OVERHEAD_BYTES, recordBytes } from './record-size.js';
import { backoffMs } from '../shared/backoff.js';
import type { TopicSerdes } from './serdes.js';

export interface OutgoingRecord<V> {
  readonly key: string;
  /** `null` is a tombstone: it deletes the key from a compacted topic. */
  readonly value: V | null;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * When the broker took the records of one `send`, by partition: the log-append time of each
 * partition written, for topics that stamp records on append (`timestamps: 'append'`); empty otherwise.
 */
export type AppendTimes = ReadonlyMap<number, number>;

export interface Producer {
  send<V>(spec: TopicSpec<V>, records: readonly OutgoingRecord<V>[]): Promise<AppendTimes>;
  /** Writes bytes as they are, for records that must keep their original encoding (dead letters). */
  sendRaw(topic: string, records: readonly { key: string | null; value: Buffer | null; headers?: Record<string, string> }[]): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * An idempotent producer: the broker drops the duplicates a retried request would write, which
 * holds only while the producer keeps retrying, so it never gives up on its own; callers that
 * answer someone (the API) put their own deadline on `send`. The default partitioner hashes keys
 * like the Java client, so every client agrees where a key lives.
 *
 * Idempotence allows one request in flight, so concurrent `send` calls are gathered: while a
 * request is out, new records queue, and the next request carries as many of them as the topics'
 * `max.message.bytes` allow (read from the cluster, counted in bytes). Under load one request takes
 * hundreds of sends, a large send is split over several requests; alone, a send goes at once.
 * Order per key is kept. A record that no request could carry fails its own send only.
 */
export async function createProducer(kafka: Kafka, serdes: TopicSerdes): Promise<Producer> {
  const limits = await openMessageLimits(kafka);
  const gathered = await gathering(() => kafka.producer(PRODUCER_OPTIONS), limits);
  const gather = gathered.send;
  return {
    async send(spec, records) {
      const serde = serdes.for(spec);
      return gather(
        serdes.nameOf(spec),
        records.map((record) => ({
          key: record.key,
          value: record.value === null ? null : serde.encode(record.value),
          headers: record.headers ? { ...record.headers } : undefined,
        })),
      );
    },
    async sendRaw(topic, records) {
      await gather(topic, records.map((r) => ({ key: r.key, value: r.value, headers: r.headers })));
    },
    async disconnect() {
      await gathered.close();
      await limits.close();
    },
  };
}

const PRODUCER_OPTIONS = {
  idempotent: true,
  maxInFlightRequests: 1,
  retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 5_000 },
  createPartitioner: Partitioners.DefaultPartitioner,
} as const;

/** One `send`: its records go out in one or more requests, in order. */
interface Waiting {
  readonly topic: string;
  readonly messages: readonly Message[];
  /** `recordBytes` of each message. */
  readonly sizes: readonly number[];
  /** Messages handed to requests so far. */
  taken: number;
  /** Messages the broker has acknowledged. */
  written: number;
  readonly times: Map<number, number>;
  settled: boolean;
  resolve(times: AppendTimes): void;
  reject(error: unknown): void;
}

/** The part `[from, to)` of a send that one request carries. */
interface Slice {
  readonly waiting: Waiting;
  readonly from: number;
  readonly to: number;
}

/** Broker answers of a request whose records do not fit the topic's limit. */
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

async function gathering(newProducer: () => KafkaProducer, limits: MessageLimits) {
  let producer = newProducer();
  await producer.connect();
  let queue: Waiting[] = [];
  let sending = false;
  let closed = false;
  /** After a request was refused as too large, the next one takes at most this many records. */
  let cap = Number.POSITIVE_INFINITY;

  const fail = (waiting: Waiting, error: unknown) => {
    if (waiting.settled) return;
    waiting.settled = true;
    queue = queue.filter((w) => w !== waiting);
    waiting.reject(error);
  };

  /** The next request: sends from the head of the queue, cut where the smallest limit among their topics is reached. */
  const nextRequest = async (): Promise<Slice[]> => {
    const room = new Map<string, number>();
    for (const topic of new Set(queue.map((w) => w.topic))) room.set(topic, (await limits.of(topic)) - BATCH_OVERHEAD_BYTES);
    for (const waiting of queue.filter((w) => w.taken === 0)) {
      const limit = room.get(waiting.topic)!;
      const over = waiting.sizes.find((size) => size > limit);
      if (over !== undefined) fail(waiting, tooLarge(waiting.topic, over, limit));
    }
    const slices: Slice[] = [];
    let bytes = 0;
    let count = 0;
    let limit = Number.POSITIVE_INFINITY;
    for (const waiting of queue) {
      limit = Math.min(limit, room.get(waiting.topic)!);
      let to = waiting.taken;
      while (to < waiting.messages.length && count < cap && (count === 0 || bytes + waiting.sizes[to]! <= limit)) {
        bytes += waiting.sizes[to]!;
        count += 1;
        to += 1;
      }
      if (to > waiting.taken) slices.push({ waiting, from: waiting.taken, to });
      waiting.taken = to;
      if (to < waiting.messages.length) break;
    }
    queue = queue.filter((w) => w.taken < w.messages.length);
    return slices;
  };

  /** Puts the sends of a refused request back at the head of the queue, as they were before it. */
  const giveBack = (slices: readonly Slice[]) => {
    for (const { waiting, from } of slices) waiting.taken = from;
    const back = slices.map((s) => s.waiting).filter((w) => !w.settled);
    queue = [...back, ...queue.filter((w) => !back.includes(w))];
  };

  /**
   * A refused request leaves kafkajs' idempotence bookkeeping wrong: it rolls back the sequence
   * numbers of every partition of the request, those the broker wrote too, and the broker would
   * drop (or refuse) the next records under the reused numbers. A new producer id starts clean.
   */
  const replaceProducer = async () => {
    await producer.disconnect().catch(() => undefined);
    producer = newProducer();
    await producer.connect();
  };

  const write = async (slices: readonly Slice[]) => {
    const byTopic = new Map<string, Message[]>();
    for (const { waiting, from, to } of slices) {
      const messages = byTopic.get(waiting.topic) ?? [];
      if (messages.length === 0) byTopic.set(waiting.topic, messages);
      messages.push(...waiting.messages.slice(from, to));
    }
    const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    const count = slices.reduce((sum, s) => sum + s.to - s.from, 0);
    for (let failures = 0; ; failures++) {
      try {
        const written = await producer.sendBatch({ compression: CompressionTypes.None, topicMessages });
        cap = Number.POSITIVE_INFINITY;
        for (const slice of slices) acknowledge(slice, written);
        return;
      } catch (error) {
        if (!closed && classify(error) === 'transient') {
          // kafkajs gives up when it cannot reconnect to the cluster (a broker down for a while).
          // The same records again: a request the broker took before the connection failed keeps
          // its sequence numbers, so it is not written twice.
          await new Promise((resolve) => setTimeout(resolve, backoffMs(failures + 1, 100, 5_000)));
          continue;
        }
        if (!closed) await replaceProducer();
        if (!closed && isTooLarge(error) && count > 1) {
          // The topic's limit went down since it was read: read it again and send fewer at once.
          limits.forget([...byTopic.keys()]);
          cap = Math.max(1, Math.floor(count / 2));
          giveBack(slices);
          return;
        }
        for (const { waiting } of slices) fail(waiting, error);
        return;
      }
    }
  };

  const drain = async () => {
    sending = true;
    try {
      while (queue.length > 0) {
        const slices = await nextRequest();
        if (slices.length > 0) await write(slices);
      }
    } finally {
      sending = false;
    }
  };

  return {
    send: (topic: string, messages: Message[]) =>
      new Promise<AppendTimes>((resolve, reject) => {
        if (messages.length === 0) return resolve(new Map());
        queue.push({ topic, messages, sizes: messages.map(recordBytes), taken: 0, written: 0, times: new Map(), settled: false, resolve, reject });
        if (!sending) void drain();
      }),
    async close() {
      closed = true;
      await producer.disconnect();
    },
  };
}

function acknowledge({ waiting, from, to }: Slice, written: readonly RecordMetadata[]): void {
  waiting.written += to - from;
  for (const [partition, at] of appendTimes(written, waiting.topic)) waiting.times.set(partition, at);
  if (waiting.written === waiting.messages.length && !waiting.settled) {
    waiting.settled = true;
    waiting.resolve(waiting.times);
  }
}

function isTooLarge(error: unknown): boolean {
  return hasProtocolError(error, TOO_LARGE);
}

function tooLarge(topic: string, size: number, room: number): GatewayFailure {
  return GatewayFailure.nonRetryable(
    `a record of up to ${size} bytes does not fit ${topic}, whose record batches may hold ${room + BATCH_OVERHEAD_BYTES} bytes (max.message.bytes)`,
  );
}

/** A request gathers several sends: each gets the append times of its topic's partitions (-1: stamped at creation). */
function appendTimes(written: readonly RecordMetadata[], topic: string): AppendTimes {
  const times = new Map<number, number>();
  for (const meta of written) {
    const at = Number(meta.logAppendTime ?? -1);
    if (meta.topicName === topic && at >= 0) times.set(meta.partition, at);
  }
  return times;
}
