import { CompressionTypes, Partitioners, type Kafka, type Producer as KafkaProducer } from 'kafkajs';
import { topicName, type TopicSpec } from './catalogue.js';
import type { TopicSerdes } from './serdes.js';

export interface OutgoingRecord<V> {
  readonly key: string;
  /** `null` is a tombstone: it deletes the key from a compacted topic. */
  readonly value: V | null;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Producer {
  send<V>(spec: TopicSpec<V>, records: readonly OutgoingRecord<V>[]): Promise<void>;
  /** Writes bytes as they are, for records that must keep their original encoding (dead letters). */
  sendRaw(topic: string, records: readonly { key: string | null; value: Buffer | null; headers?: Record<string, string> }[]): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * An idempotent producer: the broker drops the duplicates a retried request would write, which
 * holds only while the producer keeps retrying, so it never gives up on its own; callers that
 * answer someone (the API) put their own deadline on `send`. The default partitioner hashes keys
 * like the Java client, so every client agrees where a key lives.
 */
export async function createProducer(kafka: Kafka, serdes: TopicSerdes): Promise<Producer> {
  const producer: KafkaProducer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: Number.MAX_SAFE_INTEGER, maxRetryTime: 5_000 },
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  return {
    async send(spec, records) {
      const serde = serdes.for(spec);
      await producer.send({
        topic: topicName(spec, serdes.prefix),
        compression: CompressionTypes.None,
        messages: records.map((record) => ({
          key: record.key,
          value: record.value === null ? null : serde.encode(record.value),
          headers: record.headers ? { ...record.headers } : undefined,
        })),
      });
    },
    async sendRaw(topic, records) {
      await producer.send({ topic, messages: records.map((r) => ({ key: r.key, value: r.value, headers: r.headers })) });
    },
    disconnect: () => producer.disconnect(),
  };
}
