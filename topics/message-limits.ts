import kafkajs, { type Admin, type Kafka } from 'kafkajs';

const { ConfigResourceTypes } = kafkajs;

/** Kafka's own default of `message.max.bytes`, for a cluster that does not say. */
export const KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

/** The largest record batch each topic accepts, as the cluster says. */
export interface MessageLimits {
  /** The topic's `max.message.bytes` (its own, or the broker's `message.max.bytes` it inherits). */
  of(topic: string): Promise<number>;
  /** Forgets what was read of these topics: the next `of` asks the cluster again. */
  forget(topics: readonly string[]): void;
  close(): Promise<void>;
}

/**
 * Reads each topic's limit once through one admin connection and keeps it. A topic the cluster
 * cannot describe (not created yet) is held to the broker's default, read again next time.
 */
export async function openMessageLimits(kafka: Kafka): Promise<MessageLimits> {
  const admin = kafka.admin();
  await admin.connect();
  const known = new Map<string, Promise<number>>();
  return {
    of(topic) {
      let limit = known.get(topic);
      if (limit === undefined) {
        limit = topicLimit(admin, topic);
        known.set(topic, limit);
        limit.catch(() => known.delete(topic));
      }
      return limit.catch(() => brokerLimit(admin));
    },
    forget(topics) {
      for (const topic of topics) known.delete(topic);
    },
    close: () => admin.disconnect(),
  };
}

async function topicLimit(admin: Admin, topic: string): Promise<number> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] }],
  });
  return sizeIn(resources[0]?.configEntries, 'max.message.bytes');
}

/** The broker's `message.max.bytes`; Kafka's default when it cannot be read. */
export async function brokerLimit(admin: Admin): Promise<number> {
  try {
    const { brokers } = await admin.describeCluster();
    const broker = brokers[0];
    if (broker === undefined) return KAFKA_DEFAULT_MAX_MESSAGE_BYTES;
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.BROKER, name: String(broker.nodeId), configNames: ['message.max.bytes'] }],
    });
    return sizeIn(resources[0]?.configEntries, 'message.max.bytes');
  } catch {
    return KAFKA_DEFAULT_MAX_MESSAGE_BYTES;
  }
}

function sizeIn(entries: readonly { configName: string; configValue: string }[] | undefined, name: string): number {
  const value = Number(entries?.find((entry) => entry.configName === name)?.configValue);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`the cluster gave no ${name}`);
  return value;
}
