import { buildServer } from '../api/server.js';
import { projections, runProjection } from '../processors/index.js';
import type { Clients } from './clients.js';
import { checkDependencies } from './readiness.js';

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

/** Roles with nothing to run in this version; they start so that deployments can name them already. */
const idleRoles: ReadonlySet<Role> = new Set(['connector', 'dispatcher', 'sweeper']);

export async function startRoles(roles: readonly Role[], clients: Clients): Promise<Running> {
  const running: Running[] = [];
  const { logger } = clients;
  if (roles.includes('processor')) {
    for (const projection of projections.values()) running.push(await runProjection(clients, projection));
  }
  for (const role of roles.filter((r) => idleRoles.has(r))) logger.info({ role }, 'role has no work in this version');
  if (roles.includes('api')) {
    const app = await buildServer({ logger, checkDependencies: () => checkDependencies(clients) });
    await app.listen({ host: clients.config.host, port: clients.config.port });
    running.unshift({ stop: () => app.close() });
  }
  return {
    async stop() {
      for (const part of running) await part.stop().catch((err: unknown) => logger.warn({ err }, 'stop failed'));
    },
  };
}
