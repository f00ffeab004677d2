import type { Pool } from 'pg';
import { projectInstance } from '../../processors/instances/queries.js';
import { setTimeout as sleep } from 'node:timers/promises';

export { projectInstance, projectInstances, type InstanceRow } from '../../processors/instances/queries.js';

/**
 * Waits (at most `timeoutMs`) until the instances projection holds a number just written, so an
 * answer that names it is followed by routes that read it (pairing, listing); false if it did not.
 */
export async function untilProjected(pool: Pool, projectId: string, instanceId: string, timeoutMs: number): Promise<boolean> {
  return (await untilRead(() => projectInstance(pool, projectId, instanceId), timeoutMs)) !== undefined;
}

/** Reads the projection again every 50 ms until `read` finds something or `timeoutMs` passes. */
export async function untilRead<T>(read: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await read();
    if (found !== undefined || Date.now() >= deadline) return found;
    await sleep(50);
  }
}
