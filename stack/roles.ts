import type { RunningApi } from './api-role.js';
import type { Clients } from './clients.js';
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
  const tracing = await startTracing(roles.join(','), clients.config.otlpEndpoint);
  const running: Running[] = [];
  // Only the roles that store or read media make the bucket (a local stack starts without it).
  if (roles.includes('api') || roles.includes('connector')) {
    await clients.media.ensure().catch((err: unknown) => logger.warn({ err }, 'media store not ready yet'));
  }
  // Each role's modules are loaded only by a process that runs it: a new process works sooner.
  if (roles.includes('processor')) {
    const { startProcessor } = await import('./processor-role.js');
    running.push(await startProcessor(clients));
  }
  if (roles.includes('connector')) {
    const { startConnector } = await import('./connector-role.js');
    running.push(await startConnector(clients));
  }
  if (roles.includes('dispatcher')) {
    const { startDispatcher } = await import('../connectors/webhooks/index.js');
    running.push(await startDispatcher(clients));
  }
  if (roles.includes('sweeper')) {
    const { startSweeper } = await import('../processors/connections/sweeper.js');
    running.push(await startSweeper(clients, { intervalMs: clients.config.sweepIntervalMs }));
  }
  let api: RunningApi | undefined;
  if (roles.includes('api')) {
    const { startApi } = await import('./api-role.js');
    api = await startApi(clients, { listen: true });
  }
  const { host, metricsPort, metricsToken } = clients.config;
  if (metricsPort > 0) running.push(await serveMetrics(clients.metrics.registry, host, metricsPort, metricsToken));
  const stopping = (part: Running) => part.stop().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
  return {
    api,
    async stop() {
      // The API first, so that no command is accepted once the rest has begun to stop; then every
      // other role at once, each leaving its groups in the time of the slowest rather than in turn.
      if (api) await stopping(api);
      await Promise.all(running.map(stopping));
      // Last: the spans of the roles' final work still go out.
      await tracing.stop().catch((err: unknown) => logger.warn({ err }, 'stopping tracing failed'));
    },
  };
}
