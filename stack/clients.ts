import { createCipher, type Cipher } from '../shared/cipher.js';
import pg from 'pg';
import type { Logger } from 'pino';
import { AvroSerdes } from '../schemas/serde.js';
import { loadSchemaFiles } from '../schemas/load.js';
import {
  createKafka,
  countingDeadLetters,
  createProducer,
  deadLetterTopic,
  ensureTopics,
  GroupInstances,
  GroupMembers,
  RunningGroups,
  topics,
  TopicSerdes,
  type FencedMember,
  type Kafka,
  type Producer,
  type TopicSpec,
} from '../topics/index.js';
import { createHttpFetcher, type HttpFetcher } from '../shared/http/index.js';
// The media modules the clients need, not the folder's index: that one loads the converters too.
import { createMediaStore } from '../connectors/media/create-store.js';
import type { MediaStore } from '../connectors/media/store.js';
import { usageProducer } from '../connectors/media/usage.js';
import { createMediaLinks, type MediaLinks } from '../shared/media-links.js';
import { createMailer, type Mailer } from '../connectors/email/smtp.js';
import { retrySchedules, tiersOf } from '../connectors/webhooks/index.js';
import { createClickHouse, type ClickHouse } from '../shared/clickhouse.js';
import { ProcessFence } from '../shared/process-fence.js';
import type { Config } from './config.js';
import { createMetrics, type Metrics } from './metrics.js';

/** Every client a role may use, built once per process. Modules receive only the ones they need. */
export interface Clients {
  readonly config: Config;
  readonly logger: Logger;
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: pg.Pool;
  readonly clickhouse: ClickHouse;
  readonly media: MediaStore;
  readonly mediaLinks: MediaLinks;
  /** Outbound HTTP with timeouts, size caps and the private-address guard. */
  readonly http: HttpFetcher;
  readonly mailer: Mailer;
  /** Seals the secrets that must be read back (webhook secrets, OTP codes); one per process. */
  readonly cipher: Cipher;
  /** The registry of this process (`/metrics`) and the series recorded into it. */
  readonly metrics: Metrics;
  /** Resolves when another process joined one of this process's groups under its `GATEWAY_INSTANCE_ID`; never without one. */
  readonly fenced: Promise<FencedMember>;
  /** The member id of each consumer's latest join, unless `KAFKA_DEAD_MEMBER_CHECK_MS` is 0: see `startMemberLiveness`. */
  readonly members: GroupMembers | undefined;
  /** What this process holds under its liveness lock (numbers' leases), when it runs one (`ClientOptions.liveness`): see `startMemberLiveness`. */
  readonly fence: ProcessFence | undefined;
  close(): Promise<void>;
}

/** The topics of the catalogue and the retry tiers of the configured schedule and of partner webhooks. */
export function allTopics(config: Config): readonly TopicSpec<unknown>[] {
  return [...Object.values(topics), ...tiersOf(retrySchedules(config.webhooks.retryDelaysMs))];
}

/** The serdes of every topic, their schemas registered. */
export function registeredSerdes(config: Config): Promise<TopicSerdes> {
  return TopicSerdes.register(new AvroSerdes(config.schemaRegistryUrl, loadSchemaFiles()), allTopics(config), config.kafka.topicPrefix);
}

export function createPool(config: Config, logger: Logger): pg.Pool {
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.databasePoolSize });
  pool.on('error', (err) => logger.warn({ err }, 'idle Postgres client failed'));
  return pool;
}

export function createMediaLinksOf(config: Config): MediaLinks {
  return createMediaLinks({ secret: config.media.signingSecret, publicBaseUrl: config.media.publicBaseUrl, ttlSeconds: config.media.urlTtlSeconds });
}

export interface ClientOptions {
  /** The process runs its liveness lock (`startProcessLiveness`), which fences its Baileys leases: `fence` is made for it. */
  readonly liveness?: boolean;
}

/** Creates the topics, registers the schemas and connects every client. */
export async function buildClients(config: Config, logger: Logger, options: ClientOptions = {}): Promise<Clients> {
  const groups = new RunningGroups();
  const instances = config.kafka.instanceId === undefined ? undefined : new GroupInstances(config.kafka.instanceId);
  const members = config.kafka.deadMemberCheckMs > 0 ? new GroupMembers() : undefined;
  const kafka = createKafka(config.kafka, logger, { groups, instances, members });
  const metrics = createMetrics({ kafka, groups, logger });
  const specs = allTopics(config);
  // Side by side: the registry does not need the topics, and a new process works sooner.
  const [created, serdes] = await Promise.all([
    ensureTopics(kafka, [...specs, deadLetterTopic], { prefix: config.kafka.topicPrefix, replicationFactor: config.kafka.replicationFactor }),
    registeredSerdes(config),
  ]);
  if (created.length > 0) logger.info({ topics: created }, 'topics created');
  const producer = countingDeadLetters(await createProducer(kafka, serdes), config.kafka.topicPrefix, metrics.registry);
  const pool = createPool(config, logger);
  const clickhouse = createClickHouse(config.clickhouse);
  const mediaLinks = createMediaLinksOf(config);
  const recordUsage = usageProducer(producer);
  const media =
    config.media.store === 's3'
      ? createMediaStore({ kind: 's3', s3: config.s3, recordUsage })
      : createMediaStore({ kind: 'filesystem', dir: config.media.dir, links: mediaLinks, recordUsage });
  const http = createHttpFetcher({ allowPrivateNetwork: config.outbound.allowPrivateNetwork, allowRanges: config.outbound.allowCidrs });
  const mailer = createMailer(config.smtpUrl);
  return {
    config,
    logger,
    kafka,
    serdes,
    producer,
    pool,
    clickhouse,
    media,
    mediaLinks,
    http,
    mailer,
    cipher: createCipher(config.secretsKey),
    metrics,
    fenced: instances?.fenced ?? new Promise<never>(() => {}),
    members,
    fence: options.liveness && members ? new ProcessFence() : undefined,
    async close() {
      await metrics.close().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await clickhouse.close().catch(() => undefined);
      media.close();
      await http.close().catch(() => undefined);
      mailer.close();
    },
  };
}
