import type { ApiContext } from './context.js';

export { WRITE_DEADLINE_MS } from '../processors/config/write.js';

/** The clients a writer of `gw.config` (processors/config) takes, out of the routes' context. */
export function configWriter(ctx: Pick<ApiContext, 'clients' | 'directory'>) {
  return { producer: ctx.clients.producer, directory: ctx.directory };
}

/** The clients a change made alone (processors/config/lock.ts) takes, out of the routes' context. */
export function configLockDeps(ctx: Pick<ApiContext, 'clients' | 'directory'>) {
  const { pool, kafka, serdes } = ctx.clients;
  return { pool, kafka, prefix: serdes.prefix, directory: ctx.directory };
}
