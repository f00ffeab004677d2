import { withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config/write.js';
import type { Pool } from 'pg';
import { projectInstances, type InstanceRow } from './queries.js';
import { stateFromRow } from './row-state.js';

/** Removes numbers: a tombstone state of each on `gw.instances`, and the connector closes its session. */
export async function deleteInstances(producer: Producer, rows: readonly InstanceRow[]): Promise<void> {
  if (rows.length === 0) return;
  const states = rows.map((row) => stateFromRow(row, { nickname: row.nickname, reason: 'deleted', deleted: true }));
  await withDeadline(producer.send(topics.instances, states.map((value) => ({ key: value.instance_id, value }))), WRITE_DEADLINE_MS);
}

/** Removes the numbers of projects, as the instances projection holds them now. */
export async function removeNumbersOf(deps: { readonly producer: Producer; readonly pool: Pool }, projectIds: readonly string[]): Promise<void> {
  for (const projectId of projectIds) await deleteInstances(deps.producer, await projectInstances(deps.pool, projectId));
}
