import { OpenedOtpCodes, OtpKeys, startConnectorRole, type OtpOpener } from '../connectors/network/index.js';
import { BaileysNetwork, BaileysProtocol, leasePool, webVersion } from '../connectors/baileys/index.js';
import { PendingReceipts, SandboxNetwork } from '../connectors/sandbox/index.js';
import { startDispatcher } from '../connectors/webhooks/index.js';
import { startPaymentEffects } from '../connectors/payments/effects-projection.js';
import { projectionsFor, runProjection, seedChangelogs } from '../processors/index.js';
import { startUsageWriter } from '../processors/usage/index.js';
import { startAnalyticsWriters } from '../processors/analytics/index.js';
import { startSweeper } from '../processors/connections/sweeper.js';
import { createAutopilot, startCampaignRunner } from '../processors/campaigns/index.js';
import { startDirectory } from '../processors/directory.js';
import { startApi, type RunningApi } from './api-role.js';
import type { Clients } from './clients.js';
import type pg from 'pg';
import { mediaSink } from './media-sink.js';
import { serveMetrics } from './metrics.js';
import { startTracing } from '../topics/index.js';

export const roleNames = ['api', 'processor', 'connector', 'dispatcher', 'sweeper'] as const;
export type Role = (typeof roleNames)[number];

/** `all`, one role, or a comma-separated list of roles. */
export function parseRoles(arg: string): Role[] {
  if (arg === 'all') return [...roleNames];
  const roles = arg.split(',').map((r) => r.trim());
  const unknown = roles.filter((r) => !(roleNames as readonly string[]).includes(r));
  if (unknown.length > 0) throw new Error(`unknown role ${unknown.join(', ')}; roles are all, ${roleNames.join(', ')}`);
  return roles as Role[];
}

interface Running {
  stop(): Promise<void>;
}

export interface RunningRoles extends Running {
  /** The API of this process, when it runs the api role. */
  readonly api: RunningApi | undefined;
}

export async function startRoles(roles: readonly Role[], clients: Clients): Promise<RunningRoles> {
  const { logger } = clients;
  const tracing = startTracing(roles.join(','), clients.config.otlpEndpoint);
  const running: Running[] = [];
  if (roles.includes('processor')) {
    const seeded = await seedChangelogs(clients);
    if (seeded.contacts + seeded.messages > 0) logger.info(seeded, 'contacts and messages written to their changelogs for the first time');
    // The campaign watch (safety autopilot) sees the campaigns projection's facts and is asked by the runner.
    const watch = createAutopilot();
    // Side by side: each consumer's join waits for its group to rebalance, and a new processor should work soon.
    const [projections, [directory, runner], ...writers] = await Promise.all([
      Promise.all([...projectionsFor({ ...clients, watch }, 'live').values()].map((projection) => runProjection(clients, projection))),
      startDirectory(clients).then(async (started) => [started, await startCampaignRunner({ ...clients, directory: started.directory, watch })] as const),
      startUsageWriter(clients),
      startAnalyticsWriters(clients),
      startPaymentEffects(clients),
    ]);
    // The runner stops before the directory it reads.
    running.push(...projections, runner, directory, ...writers);
  }
  if (roles.includes('connector')) {
    const otp = new OpenedOtpCodes(new OtpKeys(clients.pool), clients.cipher);
    const leases = leasePool(clients.config.databaseUrl, clients.config.baileys.leaseRenewMs, clients.logger);
    running.push(await startConnectorRole(clients, { connectors: [sandboxNetwork(clients, otp), baileysNetwork(clients, otp, leases)], otp }));
    // After the sessions: a closing session renews and releases its lease through this pool.
    running.push({ stop: () => leases.end() });
  }
  if (roles.includes('dispatcher')) running.push(await startDispatcher(clients));
  if (roles.includes('sweeper')) running.push(await startSweeper(clients, { intervalMs: clients.config.sweepIntervalMs }));
  let api: RunningApi | undefined;
  if (roles.includes('api')) {
    api = await startApi(clients, { listen: true });
    running.unshift(api);
  }
  const { host, metricsPort, metricsToken } = clients.config;
  if (metricsPort > 0) running.push(await serveMetrics(clients.metrics.registry, host, metricsPort, metricsToken));
  return {
    api,
    async stop() {
      for (const part of running) await part.stop().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
      // Last: the spans of the roles' final work still go out.
      await tracing.stop().catch((err: unknown) => logger.warn({ err }, 'stopping tracing failed'));
    },
  };
}

/** The simulated network, with received media in the media store and OTP codes opened by the role. */
function sandboxNetwork(clients: Clients, otp: OtpOpener): SandboxNetwork {
  return new SandboxNetwork({
    logger: clients.logger.child({ role: 'connector' }),
    receipts: new PendingReceipts(clients.pool),
    media: mediaSink(clients.media),
    otp,
  });
}

/** A connect waits this long at most for the current WhatsApp Web version before it announces the pinned one. */
const WEB_VERSION_TIMEOUT_MS = 3_000;

/**
 * The real network through Baileys: every connector worker runs it beside the sandbox, and the
 * numbers whose `connector` is `baileys` open here (a deployment picks it for new numbers with
 * CONNECTOR=baileys). Received media go to the media store; sends read theirs from it.
 */
export function baileysNetwork(clients: Clients, otp: OtpOpener, leases: pg.Pool): BaileysNetwork {
  const logger = clients.logger.child({ role: 'connector', connector: 'baileys' });
  const { baileys } = clients.config;
  const mapping = new BaileysProtocol({
    pool: clients.pool,
    logger,
    media: mediaSink(clients.media),
    mediaOf: async (source) => {
      const stored = source.media_ref === null ? undefined : await clients.media.get(source.media_ref);
      if (stored === undefined) throw new Error('the media of the send is not in the media store');
      return stored.body;
    },
    otp,
  });
  return new BaileysNetwork({
    pool: clients.pool,
    leasePool: leases,
    logger,
    mapping,
    socket: {
      url: (instanceId) => baileys.url.replaceAll('{instance_id}', encodeURIComponent(instanceId)),
      connectTimeoutMs: baileys.connectTimeoutMs,
      version: webVersion({ override: baileys.webVersion, timeoutMs: WEB_VERSION_TIMEOUT_MS, logger }),
      reconnectBaseMs: baileys.reconnectBaseMs,
      reconnectMaxMs: baileys.reconnectMaxMs,
      leaseRenewMs: baileys.leaseRenewMs,
      baileysLogLevel: 'warn',
    },
  });
}
