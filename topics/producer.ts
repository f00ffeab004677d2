import { CompressionTypes, Partitioners, type Kafka, type Message, type Producer as KafkaProducer, type RecordMetadata } from 'kafkajs';
import { topicName, type TopicSpec } from './catalogue.js';
import { classify } from './failure.js';
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
 * request is out, new records queue, and the next request carries all of them. Under load one
 * request takes hundreds of sends; alone, a send goes at once. Order per key is kept.
 */
export async function createProducer(kafka: Kafka, serdes: TopicSerdes): Promise<Producer> {
  const producer: KafkaProducer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 5_000 },
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const gathered = gathering(producer);
  const gather = gathered.send;
  return {
    async send(spec, records) {
      const serde = serdes.for(spec);
      return gather(
        topicName(spec, serdes.prefix),
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
    disconnect: () => {
      gathered.close();
      return producer.disconnect();
    },
  };
}

interface Waiting {
  readonly topic: string;
  readonly messages: Message[];
  resolve(times: AppendTimes): void;
  reject(error: unknown): void;
}

/** Most records one request carries; more wait for the next one. */
const MAX_RECORDS_PER_REQUEST = 2_000;

function gathering(producer: KafkaProducer) {
  let queue: Waiting[] = [];
  let sending = false;
  let closed = false;

  const drain = async () => {
    sending = true;
    while (queue.length > 0) {
      let count = 0;
      const taken = queue.findIndex((w) => (count += w.messages.length) > MAX_RECORDS_PER_REQUEST);
      const cut = taken === -1 ? queue.length : Math.max(1, taken);
      const batch = queue.slice(0, cut);
      queue = queue.slice(cut);
      const byTopic = new Map<string, Message[]>();
      for (const w of batch) {
        const messages = byTopic.get(w.topic) ?? [];
        if (messages.length === 0) byTopic.set(w.topic, messages);
        messages.push(...w.messages);
      }
      const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
      for (let failures = 0; ; failures++) {
        try {
          const written = await producer.sendBatch({ compression: CompressionTypes.None, topicMessages });
          for (const w of batch) w.resolve(appendTimes(written, w.topic));
          break;
        } catch (error) {
          if (closed || classify(error) !== 'transient') {
            for (const w of batch) w.reject(error);
            break;
          }
          // kafkajs gives up when it cannot reconnect to the cluster (a broker down for a while).
          // The same records again: the idempotent producer reuses their sequence numbers, so a
          // request the broker took before the connection failed is not written twice.
          await new Promise((resolve) => setTimeout(resolve, backoffMs(failures + 1, 100, 5_000)));
        }
      }
    }
    sending = false;
  };

  return {
    send: (topic: string, messages: Message[]) =>
      new Promise<AppendTimes>((resolve, reject) => {
        queue.push({ topic, messages, resolve, reject });
        if (!sending) void drain();
      }),
    close: () => {
      closed = true;
    },
  };
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
