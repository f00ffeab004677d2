import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The repository root, whether running from `dist/` or from the TypeScript sources. */
export const repoRoot = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const parts = here.split(path.sep);
  const dist = parts.lastIndexOf('dist');
  return dist >= 0 ? parts.slice(0, dist).join(path.sep) : path.resolve(here, '..');
})();

export interface S3Config {
  readonly endpoint: string;
  readonly region: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly forcePathStyle: boolean;
}

export type ClickHouseConfig =
  | { readonly kind: 'server'; readonly url: string }
  | { readonly kind: 'embedded'; readonly path: string };

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly logLevel: string;
  readonly logFormat: 'json' | 'pretty';
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    /** Prepended to every topic name: lets several gateways (or test runs) share one cluster. */
    readonly topicPrefix: string;
    readonly replicationFactor: number;
  };
  readonly schemaRegistryUrl: string;
  readonly databaseUrl: string;
  readonly clickhouse: ClickHouseConfig;
  readonly s3: S3Config;
  readonly smtpUrl: string;
  /** Folder of the local stack's data and logs (git-ignored). */
  readonly stackRoot: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

function integer(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

/** Reads the environment once. Every variable has a default that points at the local stack. */
export function loadConfig(env: Env = process.env): Config {
  const stackRoot = text(env, 'GATEWAY_STACK_DIR', path.join(repoRoot, '.stack'));
  const clickhouseUrl = env.CLICKHOUSE_URL?.trim();
  return Object.freeze({
    host: text(env, 'HOST', '0.0.0.0'),
    port: integer(env, 'PORT', 3000),
    logLevel: text(env, 'LOG_LEVEL', 'info'),
    logFormat: text(env, 'LOG_FORMAT', process.stdout.isTTY ? 'pretty' : 'json') === 'pretty' ? 'pretty' : 'json',
    kafka: Object.freeze({
      brokers: Object.freeze(text(env, 'KAFKA_BROKERS', '127.0.0.1:9092').split(',').map((b) => b.trim())),
      clientId: text(env, 'KAFKA_CLIENT_ID', 'gateway'),
      topicPrefix: text(env, 'KAFKA_TOPIC_PREFIX', ''),
      replicationFactor: integer(env, 'KAFKA_REPLICATION_FACTOR', 1),
    }),
    schemaRegistryUrl: text(env, 'SCHEMA_REGISTRY_URL', 'http://127.0.0.1:8081/apis/ccompat/v7'),
    databaseUrl: text(env, 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/gateway'),
    clickhouse: Object.freeze(
      clickhouseUrl
        ? { kind: 'server' as const, url: clickhouseUrl }
        : { kind: 'embedded' as const, path: text(env, 'CHDB_PATH', path.join(stackRoot, 'data', 'chdb')) },
    ),
    s3: Object.freeze({
      endpoint: text(env, 'S3_ENDPOINT', 'http://127.0.0.1:9000'),
      region: text(env, 'S3_REGION', 'us-east-1'),
      bucket: text(env, 'S3_BUCKET', 'gateway-media'),
      accessKeyId: text(env, 'S3_ACCESS_KEY_ID', 'local'),
      secretAccessKey: text(env, 'S3_SECRET_ACCESS_KEY', 'localsecret'),
      forcePathStyle: text(env, 'S3_FORCE_PATH_STYLE', 'true') === 'true',
    }),
    smtpUrl: text(env, 'SMTP_URL', 'smtp://127.0.0.1:1025'),
    stackRoot,
  });
}

/** A copy of the config that is safe to log: credentials inside URLs are masked. */
export function redactConfig(config: Config): unknown {
  const mask = (url: string) => url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
  return {
    ...config,
    databaseUrl: mask(config.databaseUrl),
    smtpUrl: mask(config.smtpUrl),
    clickhouse: config.clickhouse.kind === 'server' ? { kind: 'server', url: mask(config.clickhouse.url) } : config.clickhouse,
    s3: { ...config.s3, secretAccessKey: '***' },
  };
}
