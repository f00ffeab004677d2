import { asAccountId, asEventId, asProjectId, newId } from '../../schemas/ids.js';
import type { Pool } from '../../schemas/records.js';
import type { PoolEntry } from '../directory.js';
import { ConfigRefused } from './refused.js';
import { writeConfig, type ConfigWriter } from './write.js';

type Owner = { readonly accountId: string; readonly projectId: string };

/** A pool of the project; `not_found` when the project has none of that id. */
export function poolOf(writer: ConfigWriter, projectId: string, id: string): PoolEntry {
  const pool = writer.directory.pools.get(id);
  if (pool === undefined || pool.project_id !== projectId) throw new ConfigRefused('not_found');
  return pool;
}

/** Writes a pool's full state (its name and numbers) and answers it as the directory now holds it. */
export async function writePool(writer: ConfigWriter, owner: Owner, id: string, pool: Omit<Pool, 'kind'>): Promise<PoolEntry> {
  await writeConfig(writer, id, {
    event_id: asEventId(newId('cfg')),
    occurred_at: Date.now(),
    account_id: asAccountId(owner.accountId),
    project_id: asProjectId(owner.projectId),
    instance_id: null,
    entity_id: id,
    entity: { kind: 'pool', name: pool.name, instance_ids: pool.instance_ids },
  });
  return poolOf(writer, owner.projectId, id);
}

/** Deletes a pool of the project; `not_found` when the project has none of that id. */
export async function removePool(writer: ConfigWriter, owner: Owner, id: string): Promise<void> {
  poolOf(writer, owner.projectId, id);
  await writeConfig(writer, id, null);
}
