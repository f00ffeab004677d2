import type { ConfigRecord } from '../schemas/records.js';
import { topics } from '../topics/index.js';
import type { ApiContext } from './context.js';
import { withDeadline } from '../shared/deadline.js';

/** How long a route waits for the log to take a write. */
export const WRITE_DEADLINE_MS = 10_000;

/**
 * Writes an entity of `gw.config` (null deletes it) and resolves once this process's directory
 * has applied that very write, so the answer of the route already holds (a new key works at once).
 */
export async function writeConfig(ctx: ApiContext, entityId: string, record: ConfigRecord | null): Promise<void> {
  await withDeadline(ctx.clients.producer.send(topics.config, [{ key: entityId, value: record }]), WRITE_DEADLINE_MS);
  await ctx.directory.applied(entityId, record?.event_id ?? null);
}
