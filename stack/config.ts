import { availableParallelism, hostname } from 'node:os';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import type { ServiceIdentity } from '../api/connect/routes.js';
import type { S3Config } from '../connectors/media/s3.js';
import type { StripeOptions } from '../connectors/payments/stripe.js';
import type { WebhookOptions } from '../connectors/webhooks/index.js';
import type { ClickHouseOptions } from '../shared/clickhouse.js';
import { repoRoot } from '../shared/repo-root.js';
import { ConnectorKindValues, type ConnectorKind } from '../schemas/records.js';
// The one constant, not topics' index: reading the configuration loads no Kafka client.
import { DEFAULT_SESSION_TIMEOUT_MS } from '../topics/group-timing.js';

/**
 * `development` lets the sandbox providers run (the payment form that confirms from a public route,
 * the simulated network and its controls); `production`, the default of every command but
 * `gateway start`, refuses them at start (`refuseSandboxInProduction`).
 */
export type GatewayMode = 'development' | 'production';

export interface Config {
  readonly mode: GatewayMode;
  readonly host: string;
  readonly port: number;
  /** Port of `/metrics` on a listener of its own, in any process; 0: on the API's port where there is one, else not served. */
  readonly metricsPort: number;
  /** The bearer token `/metrics` needs wherever it is served; unset: the API's port answers the host itself only. */
  readonly metricsToken: string | undefined;
  /**
   * Proxies whose X-Forwarded-For names the client (per-IP rate limits read it): false (none, the
   * default: a client could otherwise pick its own address), true (any), or addresses and CIDRs.
   */
  readonly trustProxy: boolean | string;
  /** Base URL of an OTLP/HTTP collector (spans go to `/v1/traces`); unset: tracing is off and costs nothing. */
  readonly otlpEndpoint: string | undefined;
  readonly logLevel: string;
  readonly logFormat: 'json' | 'pretty';
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    /** Prepended to every topic name: lets several gateways (or test runs) share one cluster. */
    readonly topicPrefix: string;
    readonly replicationFactor: number;
    /** The consumer groups' session: how soon a dead member's partitions move (docs/operations.md). */
    readonly sessionTimeoutMs: number;
    /** `GATEWAY_INSTANCE_ID`: a role process's consumers join as static members under it (docs/operations.md). */
    readonly instanceId: string | undefined;
    /** How often a role process looks for dead peers, to remove their group members at once (0: never; docs/operations.md). */
    readonly deadMemberCheckMs: number;
  };
  readonly schemaRegistryUrl: string;
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  /** Worker threads of `gateway replay` besides its main thread, each applying a share of the backlog's partitions. */
  readonly replayThreads: number;
  readonly clickhouse: ClickHouseOptions;
  readonly s3: S3Config;
  readonly smtpUrl: string;
  readonly media: {
    /** `s3` (the bucket above) or `filesystem` (a local folder served through signed links). */
    readonly store: 's3' | 'filesystem';
    readonly dir: string;
    readonly signingSecret: string;
    readonly urlTtlSeconds: number;
    /** Absolute base of the API as its users reach it, for links in payloads. */
    readonly publicBaseUrl: string;
    /** Debian's ffmpeg (or a path to one): voice notes are converted with it. */
    readonly ffmpegPath: string;
    /** Voice notes and stickers converted at once by one API process. */
    readonly conversions: number;
    /** Longest a send waits for its conversion, the wait for a free slot included. */
    readonly conversionTimeoutMs: number;
  };
  readonly outbound: {
    /** Lets outbound HTTP (media URLs, webhooks) reach private and loopback addresses: local development only. */
    readonly allowPrivateNetwork: boolean;
    readonly allowCidrs: readonly string[];
  };
  /** Seals secrets that must be read back (OTP codes, webhook secrets). Set a long random value in production. */
  readonly secretsKey: string;
  /** How long a rotated API key keeps working. */
  readonly keyRotationGraceMs: number;
  readonly webhooks: WebhookOptions;
  readonly streams: {
    /** SSE comment lines sent while no event flows, so proxies keep the connection open. */
    readonly heartbeatMs: number;
    /** Recent events each API process keeps per partition of `gw.events`, for reconnects. */
    readonly bufferPerPartition: number;
  };
  /** How often the sweeper holds every partner connection against its plan, account and project (spec 8.4: 2 minutes). */
  readonly sweepIntervalMs: number;
  /** Where the Connect component's script is served from (`{widget_url}/v1/connect.js`); the API by default. */
  readonly widgetUrl: string;
  /** Port of the demo partner page `npm start` serves (0: none). */
  readonly demoPort: number;
  /** How the Connect component names the service to a partner's customers, and the links of its consent. */
  readonly service: ServiceIdentity;
  /** Who takes the Pro payments of the component: the sandbox (no money moves) or Stripe. */
  readonly payments: { readonly provider: 'sandbox' } | { readonly provider: 'stripe'; readonly stripe: StripeOptions };
  /** The connector of numbers created without one (`POST /instances` may choose per number). */
  readonly defaultConnector: ConnectorKind;
  readonly baileys: BaileysOptions;
  /** Folder of the local stack's data and logs (git-ignored). */
  readonly stackRoot: string;
}

/** How Baileys sessions reach the network (docs/configuration.md). */
export interface BaileysOptions {
  /** The network's WebSocket address; `{instance_id}` in it is replaced by the number's id (tests use it). */
  readonly url: string;
  readonly connectTimeoutMs: number;
  readonly reconnectBaseMs: number;
  readonly reconnectMaxMs: number;
  readonly leaseRenewMs: number;
  /** `BAILEYS_WA_VERSION`: the WhatsApp Web version to announce instead of fetching the current one. */
  readonly webVersion: [number, number, number] | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

/** An absolute http(s) URL, or null when unset. */
function optionalUrl(env: Env, name: string): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new Error(`${name} must be an http(s) URL, not ${raw}`);
  return url.href;
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

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Spec 6.3: an account webhook is retried up to 5 times. */
const MAX_WEBHOOK_RETRIES = 5;

/**
 * The webhook retry schedule, `10s,1m,10m,1h,1h`: one positive duration a retry, at most
 * `MAX_WEBHOOK_RETRIES`. Refused at start otherwise, naming the entry at fault.
 */
function retryDelays(env: Env, name: string, fallback: string): readonly number[] {
  const raw = text(env, name, fallback);
  const parts = raw.split(',').map((part) => part.trim());
  const refuse = (why: string) => new Error(`${name} ${why} (got "${raw}"; e.g. 10s,1m,10m,1h,1h)`);
  if (parts.length > MAX_WEBHOOK_RETRIES) throw refuse(`has ${parts.length} delays: a webhook is retried at most ${MAX_WEBHOOK_RETRIES} times`);
  return Object.freeze(
    parts.map((part, i) => {
      if (part === '') throw refuse(`has an empty entry at position ${i + 1}`);
      const match = /^(\d+)(ms|s|m|h)$/.exec(part);
      if (!match) throw refuse(`entry "${part}" is not a duration in ms, s, m or h`);
      const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
      if (ms <= 0) throw refuse(`entry "${part}" is not positive: a retry must wait`);
      return ms;
    }),
  );
}

/**
 * Reads the environment once. Every variable has a default that points at the local stack;
 * `defaultMode` is the mode when GATEWAY_MODE is unset (`gateway start` passes development).
 */
export function loadConfig(env: Env = process.env, { defaultMode = 'production' }: { defaultMode?: GatewayMode } = {}): Config {
  const stackRoot = text(env, 'GATEWAY_STACK_DIR', path.join(repoRoot, '.stack'));
  const clickhouseUrl = env.CLICKHOUSE_URL?.trim();
  const secretsKey = text(env, 'SECRETS_KEY', 'local-development-secrets-key');
  const port = integer(env, 'PORT', 3000);
  return Object.freeze({
    mode: gatewayMode(text(env, 'GATEWAY_MODE', defaultMode)),
    host: text(env, 'HOST', '0.0.0.0'),
    port,
    metricsPort: integer(env, 'METRICS_PORT', 0),
    metricsToken: env.METRICS_TOKEN?.trim() || undefined,
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || undefined,
    trustProxy: trustProxy(text(env, 'TRUST_PROXY', 'false')),
    logLevel: text(env, 'LOG_LEVEL', 'info'),
    logFormat: text(env, 'LOG_FORMAT', process.stdout.isTTY ? 'pretty' : 'json') === 'pretty' ? 'pretty' : 'json',
    kafka: Object.freeze({
      brokers: Object.freeze(text(env, 'KAFKA_BROKERS', '127.0.0.1:9092').split(',').map((b) => b.trim())),
      clientId: text(env, 'KAFKA_CLIENT_ID', 'gateway'),
      topicPrefix: text(env, 'KAFKA_TOPIC_PREFIX', ''),
      replicationFactor: integer(env, 'KAFKA_REPLICATION_FACTOR', 1),
      sessionTimeoutMs: sessionTimeout(env),
      instanceId: instanceId(env),
      deadMemberCheckMs: integer(env, 'KAFKA_DEAD_MEMBER_CHECK_MS', 500),
    }),
    schemaRegistryUrl: text(env, 'SCHEMA_REGISTRY_URL', 'http://127.0.0.1:8081/apis/ccompat/v7'),
    databaseUrl: text(env, 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/gateway'),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 20),
    // One per core besides the main thread's, up to three: every member adds Postgres connections and broker fetches (only two members are measured: docs/operations.md).
    replayThreads: integer(env, 'REPLAY_THREADS', Math.max(0, Math.min(3, availableParallelism() - 1))),
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
    secretsKey,
    media: Object.freeze({
      store: text(env, 'MEDIA_STORE', 's3') === 'filesystem' ? ('filesystem' as const) : ('s3' as const),
      dir: text(env, 'MEDIA_DIR', path.join(stackRoot, 'data', 'media')),
      signingSecret: text(env, 'MEDIA_SIGNING_SECRET', createHmac('sha256', secretsKey).update('media-links').digest('hex')),
      urlTtlSeconds: integer(env, 'MEDIA_URL_TTL_SECONDS', 86_400),
      publicBaseUrl: text(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`),
      ffmpegPath: text(env, 'FFMPEG_PATH', 'ffmpeg'),
      conversions: positive(env, 'MEDIA_CONVERSIONS', 2),
      conversionTimeoutMs: positive(env, 'MEDIA_CONVERSION_TIMEOUT_MS', 60_000),
    }),
    outbound: Object.freeze({
      allowPrivateNetwork: text(env, 'ALLOW_PRIVATE_NETWORK', 'false') === 'true',
      allowCidrs: Object.freeze(text(env, 'OUTBOUND_ALLOW_CIDRS', '').split(',').map((c) => c.trim()).filter(Boolean)),
    }),
    keyRotationGraceMs: integer(env, 'KEY_ROTATION_GRACE_HOURS', 24) * 3_600_000,
    webhooks: Object.freeze({
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
      retryDelaysMs: retryDelays(env, 'WEBHOOK_RETRY_DELAYS', '10s,1m,10m,1h,1h'),
      endpointConcurrency: integer(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 10),
      endpointQueue: integer(env, 'WEBHOOK_ENDPOINT_QUEUE', 1_000),
    }),
    streams: Object.freeze({
      heartbeatMs: integer(env, 'STREAM_HEARTBEAT_MS', 15_000),
      bufferPerPartition: integer(env, 'STREAM_BUFFER_PER_PARTITION', 2_000),
    }),
    sweepIntervalMs: positive(env, 'SWEEP_INTERVAL_MS', 120_000),
    payments: payments(env),
    widgetUrl: text(env, 'WIDGET_URL', `http://localhost:${port}`).replace(/\/+$/, ''),
    demoPort: integer(env, 'DEMO_PORT', 3001),
    service: Object.freeze({
      name: text(env, 'SERVICE_NAME', 'Messaging Gateway'),
      termsUrl: optionalUrl(env, 'SERVICE_TERMS_URL'),
      privacyUrl: optionalUrl(env, 'SERVICE_PRIVACY_URL'),
    }),
    defaultConnector: connectorKind(text(env, 'CONNECTOR', 'sandbox')),
    baileys: Object.freeze({
      url: text(env, 'BAILEYS_WS_URL', 'wss://web.whatsapp.com/ws/chat'),
      connectTimeoutMs: positive(env, 'BAILEYS_CONNECT_TIMEOUT_MS', 20_000),
      reconnectBaseMs: positive(env, 'BAILEYS_RECONNECT_BASE_MS', 1_000),
      reconnectMaxMs: positive(env, 'BAILEYS_RECONNECT_MAX_MS', 60_000),
      leaseRenewMs: positive(env, 'BAILEYS_LEASE_RENEW_MS', 5_000),
      webVersion: webVersion(env, 'BAILEYS_WA_VERSION'),
    }),
    stackRoot,
  });
}

/** `2.3000.1023223821` → `[2, 3000, 1023223821]`; unset → undefined. */
function webVersion(env: Env, name: string): [number, number, number] | undefined {
  const raw = text(env, name, '');
  if (raw === '') return undefined;
  const parts = /^(\d+)\.(\d+)\.(\d+)$/.exec(raw);
  if (parts === null) throw new Error(`${name} must be a WhatsApp Web version like 2.3000.1023223821, not ${raw}`);
  return [Number(parts[1]), Number(parts[2]), Number(parts[3])];
}

function gatewayMode(value: string): GatewayMode {
  if (value !== 'development' && value !== 'production') throw new Error(`GATEWAY_MODE must be development or production, not ${value}`);
  return value;
}

/**
 * Production refuses the sandbox providers: the sandbox payment form confirms from a public route
 * (a deployment that forgot Stripe would give Pro away), and numbers on the simulated network reach
 * nobody. Role commands call this before they start; the message names what to set.
 */
export function refuseSandboxInProduction(config: Config): void {
  if (config.mode === 'development') return;
  const sandboxes = [
    ...(config.payments.provider === 'sandbox' ? ['PAYMENT_PROVIDER is sandbox (set PAYMENT_PROVIDER=stripe with its STRIPE_* variables)'] : []),
    ...(config.defaultConnector === 'sandbox' ? ['CONNECTOR is sandbox (set CONNECTOR=baileys)'] : []),
  ];
  if (sandboxes.length === 0) return;
  throw new Error(
    `GATEWAY_MODE is production (the default of every command but \`gateway start\`), which refuses the sandbox providers: ${sandboxes.join('; ')}. ` +
      'To run the sandbox on a development machine, set GATEWAY_MODE=development (as `gateway start`, and so `npm start`, does).',
  );
}

function connectorKind(value: string): ConnectorKind {
  if (!(ConnectorKindValues as readonly string[]).includes(value)) throw new Error(`CONNECTOR must be ${ConnectorKindValues.join(' or ')}, not ${value}`);
  return value as ConnectorKind;
}

function trustProxy(value: string): boolean | string {
  return value === 'true' || value === 'false' ? value === 'true' : value;
}

/** PAYMENT_PROVIDER=stripe needs its four STRIPE_* variables; a missing one stops the start. */
function payments(env: Env): Config['payments'] {
  const provider = text(env, 'PAYMENT_PROVIDER', 'sandbox');
  if (provider === 'sandbox') return { provider };
  if (provider !== 'stripe') throw new Error(`PAYMENT_PROVIDER must be sandbox or stripe, not ${provider}`);
  const required = (name: string) => {
    const value = env[name]?.trim();
    if (!value) throw new Error(`PAYMENT_PROVIDER=stripe needs ${name}`);
    return value;
  };
  const apiUrl = env.STRIPE_API_URL?.trim();
  return {
    provider,
    stripe: Object.freeze({
      secretKey: required('STRIPE_SECRET_KEY'),
      publishableKey: required('STRIPE_PUBLISHABLE_KEY'),
      webhookSecret: required('STRIPE_WEBHOOK_SECRET'),
      productId: required('STRIPE_PRODUCT'),
      ...(apiUrl ? { apiUrl } : {}),
    }),
  };
}

/**
 * Within what brokers accept and a member can keep: under 1 s a heartbeat (a twentieth of it, at least 100 ms) would
 * have to beat a broker's round trip under load; over Kafka's `group.max.session.timeout.ms`
 * (30 min by default) every join is refused.
 */
function sessionTimeout(env: Env): number {
  const value = integer(env, 'KAFKA_SESSION_TIMEOUT_MS', DEFAULT_SESSION_TIMEOUT_MS);
  if (value < 1_000 || value > 1_800_000) throw new Error(`KAFKA_SESSION_TIMEOUT_MS must be between 1000 and 1800000 ms, got ${value}`);
  return value;
}

/**
 * The config `gateway start` runs with: unless `GATEWAY_INSTANCE_ID` is set, the one process of a
 * development machine is a static member under `start-<host>`, so that restarted after a crash it
 * takes back its partitions at once (docs/operations.md). One `gateway start` a host: a second
 * would want the same port too.
 */
export function withStartInstance(config: Config, host = hostname()): Config {
  if (config.kafka.instanceId !== undefined) return config;
  const instanceId = `start-${host.replace(/[^A-Za-z0-9._-]/g, '-')}`.slice(0, 100);
  return { ...config, kafka: { ...config.kafka, instanceId } };
}

/** Sent to the brokers as the prefix of every group instance id: letters, digits, `.`, `_`, `-`, at most 100. */
function instanceId(env: Env): string | undefined {
  const value = env.GATEWAY_INSTANCE_ID?.trim();
  if (!value) return undefined;
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(value)) throw new Error(`GATEWAY_INSTANCE_ID must be 1 to 100 letters, digits, '.', '_' or '-', got "${value}"`);
  return value;
}

function positive(env: Env, name: string, fallback: number): number {
  const value = integer(env, name, fallback);
  if (value === 0) throw new Error(`${name} must be positive`);
  return value;
}

/** A copy of the config that is safe to log: credentials inside URLs are masked. */
export function redactConfig(config: Config): unknown {
  const mask = (url: string) => url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
  return {
    ...config,
    databaseUrl: mask(config.databaseUrl),
    smtpUrl: mask(config.smtpUrl),
    otlpEndpoint: config.otlpEndpoint === undefined ? undefined : mask(config.otlpEndpoint),
    clickhouse: config.clickhouse.kind === 'server' ? { kind: 'server', url: mask(config.clickhouse.url) } : config.clickhouse,
    s3: { ...config.s3, secretAccessKey: '***' },
    secretsKey: '***',
    metricsToken: config.metricsToken === undefined ? undefined : '***',
    media: { ...config.media, signingSecret: '***' },
    payments: config.payments.provider === 'stripe' ? { provider: 'stripe', stripe: { ...config.payments.stripe, secretKey: '***', webhookSecret: '***' } } : config.payments,
  };
}
