import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import pg from 'pg';
import { loadConfig, type Config } from '../../stack/config.js';
import { createKafka, removePrefixed } from '../../topics/index.js';

/**
 * A test's own slice of the shared stack: a fresh Postgres database and a topic prefix, so tests
 * run side by side without seeing each other's records or rows. In development mode (the sandbox
 * providers), for the test's own clients and for the CLI processes it spawns with `env`.
 */
export interface TestEnv {
  readonly id: string;
  readonly config: Config;
  /** Environment for child processes (the CLI) that must use the same slice. */
  readonly env: Record<string, string>;
  dispose(): Promise<void>;
}

const adminUrl = (databaseUrl: string) => {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  return url.toString();
};

export async function createTestEnv(overrides: Record<string, string> = {}): Promise<TestEnv> {
  const id = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const base = loadConfig();
  const database = `gateway_${id}`;
  const databaseUrl = new URL(base.databaseUrl);
  databaseUrl.pathname = `/${database}`;
  const admin = new pg.Client({ connectionString: adminUrl(base.databaseUrl) });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const env = {
    // Tests drive the sandbox providers, which run in development mode only.
    GATEWAY_MODE: 'development',
    DATABASE_URL: databaseUrl.toString(),
    KAFKA_TOPIC_PREFIX: `${id}.`,
    KAFKA_CLIENT_ID: `gateway-${id}`,
    LOG_LEVEL: 'warn',
    // Baileys sessions must not ask the internet for the current WhatsApp Web version.
    BAILEYS_WA_VERSION: '2.3000.1',
    ...overrides,
  };
  const chdbPath = path.join(base.stackRoot, 'test', id);
  const config = loadConfig({ ...process.env, ...env, CHDB_PATH: chdbPath });
  return {
    id,
    config,
    env,
    async dispose() {
      await removeTestTopics(config, `${id}.`);
      const client = new pg.Client({ connectionString: adminUrl(base.databaseUrl) });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await client.end();
      rmSync(chdbPath, { recursive: true, force: true });
    },
  };
}

/** Deletes the test's topics and registry subjects, so the shared stack does not grow run after run. */
async function removeTestTopics(config: Config, prefix: string): Promise<void> {
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'test-cleanup' }, pino({ level: 'silent' }));
  await removePrefixed(kafka, config.schemaRegistryUrl, prefix);
}

/** Thrown by a condition to stop waiting at once (the thing waited on can no longer happen). */
export class WaitAborted extends Error {
  override readonly name = 'WaitAborted';
}

/** Polls `condition` until it returns a value other than undefined/false, or fails at the deadline. */
export async function waitFor<T>(
  what: string,
  condition: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (error instanceof WaitAborted) throw error;
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
