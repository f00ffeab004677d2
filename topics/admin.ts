import kafkajs, { type Admin, type Kafka } from 'kafkajs';
import { topicName } from './catalogue.js';
import { brokerLimit } from './message-limits.js';

// Not among the names Node finds in kafkajs' CommonJS exports.
const { ConfigResourceTypes, ConfigSource, Kafka: KafkaClient, logLevel } = kafkajs;

interface TopicShape {
  readonly name: string;
  readonly partitions: number;
  readonly cleanup: 'delete' | 'compact';
  readonly retentionMs?: number;
  readonly timestamps?: 'append';
  readonly holdsCopies?: true;
  /** The topic's own `max.message.bytes`; otherwise the broker's, or twice it for `holdsCopies`. */
  readonly maxMessageBytes?: number;
}

const TIMESTAMP_TYPE = 'message.timestamp.type';
const MAX_MESSAGE_BYTES = 'max.message.bytes';

/**
 * Creates the topics of the catalogue that do not exist yet. Existing topics keep their settings,
 * except three that correctness depends on: the timestamp type (send deadlines) and the record
 * size of topics that hold copies of other topics' records, set when they differ, and the
 * retention, raised when it is shorter than the catalogue's (never lowered: an operator may keep
 * more), so a topic a newer version keeps longer stops losing what its projections replay.
 */
export async function ensureTopics(
  kafka: Kafka,
  specs: readonly TopicShape[],
  options: { prefix: string; replicationFactor: number },
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const broker = await brokerLimit(admin);
    const overrides = new Map(specs.map((spec) => [topicName(spec, options.prefix), requiredOverrides(spec, broker)]));
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((spec) => !existing.has(topicName(spec, options.prefix)));
    await setOverrides(
      admin,
      specs.flatMap((spec) => {
        const name = topicName(spec, options.prefix);
        return existing.has(name) ? [[name, [...overrides.get(name)!, ...minimumRetention(spec)]] as const] : [];
      }),
    );
    if (missing.length === 0) return [];
    const names = missing.map((spec) => topicName(spec, options.prefix));
    await retrying(() =>
      admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((spec) => ({
          topic: topicName(spec, options.prefix),
          numPartitions: spec.partitions,
          replicationFactor: options.replicationFactor,
          configEntries: [
            { name: 'cleanup.policy', value: spec.cleanup },
            { name: 'retention.ms', value: String(spec.retentionMs ?? -1) },
            ...overrides.get(topicName(spec, options.prefix))!,
          ],
        })),
      }),
    );
    // A broker that has just started may still answer that it does not host the new partitions,
    // and a leader named in the metadata may not serve its partition yet: wait until each one
    // answers an offsets request, so consumers do not start on topics that refuse their fetches.
    await Promise.all(names.map((name) => readWatermarks(admin, name)));
    return names;
  } finally {
    await admin.disconnect();
  }
}

type ConfigEntry = {
  readonly name: string;
  readonly value: string;
  /** A duration the topic must have at least (-1: for ever), not exactly: a longer one is kept. */
  readonly atLeast?: true;
};

const RETENTION_MS = 'retention.ms';

/** The retention of the catalogue, as a floor: only delete topics expire records. */
function minimumRetention(spec: TopicShape): ConfigEntry[] {
  return spec.cleanup === 'delete' ? [{ name: RETENTION_MS, value: String(spec.retentionMs ?? -1), atLeast: true }] : [];
}

/** Whether a topic whose setting is `current` lacks `wanted`. */
function lacks(wanted: ConfigEntry, current: string | undefined): boolean {
  if (wanted.atLeast !== true) return current !== wanted.value;
  const duration = (value: string | undefined) => (value === undefined || Number(value) < 0 ? Infinity : Number(value));
  // A setting the broker does not report is left as it is.
  return current !== undefined && duration(current) < duration(wanted.value);
}

/**
 * The settings a topic must have. A topic that holds copies of other topics' records (a delivery
 * task carries an event's body, a dead letter the original bytes and its reasons) accepts twice
 * what the broker takes, so whatever fits the original fits its copy.
 */
function requiredOverrides(spec: TopicShape, brokerMaxMessageBytes: number): ConfigEntry[] {
  const size = spec.maxMessageBytes ?? (spec.holdsCopies ? 2 * brokerMaxMessageBytes : undefined);
  return [
    ...(spec.timestamps === 'append' ? [{ name: TIMESTAMP_TYPE, value: 'LogAppendTime' }] : []),
    ...(size === undefined ? [] : [{ name: MAX_MESSAGE_BYTES, value: String(size) }]),
  ];
}

/**
 * Sets the overrides existing topics lack. The admin API kafkajs speaks replaces a topic's whole
 * set of overrides, so the overrides already there are written back with them.
 */
async function setOverrides(admin: Admin, wanted: readonly (readonly [string, readonly ConfigEntry[]])[]): Promise<void> {
  if (wanted.length === 0) return;
  const { resources } = await retrying(() =>
    admin.describeConfigs({ includeSynonyms: false, resources: wanted.map(([name]) => ({ type: ConfigResourceTypes.TOPIC, name })) }),
  );
  const byName = new Map(wanted);
  const stale = resources.flatMap((resource) => {
    const entries = (byName.get(resource.resourceName) ?? []).filter((e) => lacks(e, resource.configEntries.find((c) => c.configName === e.name)?.configValue));
    return entries.length > 0 ? [{ resource, entries }] : [];
  });
  if (stale.length === 0) return;
  await retrying(() =>
    admin.alterConfigs({
      validateOnly: false,
      resources: stale.map(({ resource, entries }) => ({
        type: ConfigResourceTypes.TOPIC,
        name: resource.resourceName,
        configEntries: [
          ...resource.configEntries
            .filter((e) => e.configSource === ConfigSource.TOPIC_CONFIG && !entries.some((w) => w.name === e.configName))
            .map((e) => ({ name: e.configName, value: e.configValue })),
          ...entries.map(({ name, value }) => ({ name, value })),
        ],
      })),
    }),
  );
}

type Watermarks = Map<number, { low: number; high: number }>;

/** The next offset to be written on each partition of a topic (its high watermark). */
export async function endOffsets(kafka: Kafka, topic: string): Promise<Map<number, number>> {
  return highs(await watermarks(kafka, topic));
}

/** The first offset still held (`low`) and the next to be written (`high`) of each partition of a topic. */
export async function watermarks(kafka: Kafka, topic: string): Promise<Watermarks> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await readWatermarks(admin, topic);
  } finally {
    await admin.disconnect();
  }
}

/** Records the topics hold now, every partition from its first record held to its end. */
export async function recordsHeld(kafka: Kafka, topics: readonly string[]): Promise<number> {
  let total = 0;
  for (const topic of topics) for (const { low, high } of (await watermarks(kafka, topic)).values()) total += high - low;
  return total;
}

/** `endOffsets` through one admin connection kept open, for a caller that reads them often. */
export interface OffsetReader {
  endOffsets(topic: string): Promise<Map<number, number>>;
  close(): Promise<void>;
}

export async function openOffsetReader(kafka: Kafka): Promise<OffsetReader> {
  const admin = kafka.admin();
  await admin.connect();
  return {
    endOffsets: async (topic) => highs(await readWatermarks(admin, topic)),
    close: () => admin.disconnect(),
  };
}

export async function readWatermarks(admin: Admin, topic: string): Promise<Watermarks> {
  const offsets = await retrying(() => admin.fetchTopicOffsets(topic));
  return new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]));
}

const highs = (held: Watermarks) => new Map([...held].map(([partition, { high }]) => [partition, high]));

/** Deletes a consumer group of this process's own (a throwaway reader's); the group must have no members. */
export async function deleteGroup(kafka: Kafka, groupId: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.deleteGroups([groupId]);
  } finally {
    await admin.disconnect();
  }
}

/** Throws unless the cluster answers a metadata request. */
export async function describeCluster(kafka: Kafka): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.describeCluster();
  } finally {
    await admin.disconnect();
  }
}

/** Throws unless the broker at `address` answers at once: a probe of a broker starting, with no retries. */
export async function probeBroker(broker: string): Promise<void> {
  const admin = new KafkaClient({
    clientId: 'gateway-stack-probe',
    brokers: [broker],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 2000,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
  } finally {
    await admin.disconnect();
  }
}

/**
 * kafkajs marks its errors `retriable` (its error classes are not importable from ESM), and wraps
 * one its own retries gave up on in a final error: that one is retried too, as a broker slow to
 * learn of new topics answers "does not host this topic-partition" longer than the admin retries.
 */
function isRetriable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if ('retriable' in error && error.retriable === true) return true;
  return error.name === 'KafkaJSNumberOfRetriesExceeded' && isRetriable(error.cause);
}

/** Retries what failed with a retriable broker error (leaders moving, a broker still loading), for up to about 15 s. */
async function retrying<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isRetriable(error) || attempt >= 12) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 50 * 2 ** attempt)));
    }
  }
}
