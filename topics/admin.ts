import type { Kafka } from 'kafkajs';
import { topicName } from './catalogue.js';

interface TopicShape {
  readonly name: string;
  readonly partitions: number;
  readonly cleanup: 'delete' | 'compact';
  readonly retentionMs?: number;
}

/** Creates the topics of the catalogue that do not exist yet. Existing topics are left as they are. */
export async function ensureTopics(
  kafka: Kafka,
  specs: readonly TopicShape[],
  options: { prefix: string; replicationFactor: number },
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((spec) => !existing.has(topicName(spec, options.prefix)));
    if (missing.length === 0) return [];
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((spec) => ({
        topic: topicName(spec, options.prefix),
        numPartitions: spec.partitions,
        replicationFactor: options.replicationFactor,
        configEntries: [
          { name: 'cleanup.policy', value: spec.cleanup },
          { name: 'retention.ms', value: String(spec.retentionMs ?? -1) },
        ],
      })),
    });
    return missing.map((spec) => topicName(spec, options.prefix));
  } finally {
    await admin.disconnect();
  }
}

/**
 * The next offset to be written on each partition of a topic (its high watermark). Right after a
 * topic is created its leaders may still be moving: retriable broker errors are retried.
 */
export async function endOffsets(kafka: Kafka, topic: string): Promise<Map<number, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const offsets = await admin.fetchTopicOffsets(topic);
        return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
      } catch (error) {
        if (!isRetriable(error) || attempt >= 8) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
  } finally {
    await admin.disconnect();
  }
}

/** kafkajs marks its errors `retriable`; its error classes are not importable from ESM. */
function isRetriable(error: unknown): boolean {
  return error instanceof Error && 'retriable' in error && error.retriable === true;
}
