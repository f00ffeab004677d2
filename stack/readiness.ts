import { request } from 'undici';
import type { DependencyCheck, DependencyName } from '../shared/readiness.js';
import { describeCluster } from '../topics/index.js';
import type { Clients } from './clients.js';

const TIMEOUT_MS = 2_000;

/** Probes every dependency in parallel, each with a deadline; never throws. */
export async function checkDependencies(clients: Clients): Promise<Record<DependencyName, DependencyCheck>> {
  const probes: Record<DependencyName, () => Promise<unknown>> = {
    kafka: () => describeCluster(clients.kafka),
    registry: async () => {
      // The global config is one small read of the registry's storage; listing subjects grows with them.
      const { statusCode, body } = await request(`${clients.config.schemaRegistryUrl}/config`, { headersTimeout: TIMEOUT_MS });
      await body.dump();
      if (statusCode !== 200) throw new Error(`registry answered ${statusCode}`);
    },
    postgres: () => clients.pool.query('SELECT 1'),
    clickhouse: () => clients.clickhouse.query('SELECT 1 AS ok'),
    s3: () => clients.media.check(),
    smtp: () => clients.mailer.check(),
  };
  const entries = await Promise.all(
    (Object.keys(probes) as DependencyName[]).map(async (name) => [name, await timed(probes[name])] as const),
  );
  return Object.fromEntries(entries) as Record<DependencyName, DependencyCheck>;
}

async function timed(probe: () => Promise<unknown>): Promise<DependencyCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      }),
    ]);
    return { status: 'up', latency_ms: Math.round(performance.now() - started) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { status: 'down', latency_ms: Math.round(performance.now() - started), error: message };
  } finally {
    clearTimeout(timer);
  }
}
