import pg from 'pg';
import type { Logger } from 'pino';
import { AvroSerdes } from '../schemas/serde.js';
import { loadSchemaFiles } from '../schemas/load.js';
import {
  createKafka,
  createProducer,
  deadLetterTopic,
  ensureTopics,
  topics,
  TopicSerdes,
  type Kafka,
  type Producer,
  type TopicSpec,
} from '../topics/index.js';
import { createMediaBucket, type MediaBucket } from '../connectors/media/s3.js';
import { createMailer, type Mailer } from '../connectors/email/smtp.js';
import { createClickHouse, type ClickHouse } from './clickhouse.js';
import type { Config } from './config.js';

/** Every client a role may use, built once per process. Modules receive only the ones they need. */
export interface Clients {
  readonly config: Config;
  readonly logger: Logger;
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: pg.Pool;
  readonly clickhouse: ClickHouse;
  readonly media: MediaBucket;
  readonly mailer: Mailer;
  close(): Promise<void>;
}

export const allTopics: readonly TopicSpec<unknown>[] = Object.values(topics);

/** Creates the topics, registers the schemas and connects every client. */
export async function buildClients(config: Config, logger: Logger): Promise<Clients> {
  const kafka = createKafka(config.kafka, logger);
  const created = await ensureTopics(kafka, [...allTopics, deadLetterTopic], {
    prefix: config.kafka.topicPrefix,
    replicationFactor: config.kafka.replicationFactor,
  });
  if (created.length > 0) logger.info({ topics: created }, 'topics created');
  const serdes = await TopicSerdes.register(new AvroSerdes(config.schemaRegistryUrl, loadSchemaFiles()), allTopics, config.kafka.topicPrefix);
  const producer = await createProducer(kafka, serdes);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
  pool.on('error', (err) => logger.warn({ err }, 'idle Postgres client failed'));
  const clickhouse = createClickHouse(config.clickhouse);
  const media = createMediaBucket(config.s3);
  await media.ensure().catch((err: unknown) => logger.warn({ err }, 'media bucket not ready yet'));
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
    mailer,
    async close() {
      await producer.disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await clickhouse.close().catch(() => undefined);
      media.close();
      mailer.close();
    },
  };
}
