import type { Pool } from 'pg';
import { withDeadline } from '../../shared/deadline.js';
import { endOffsets, topicName, topics, type Kafka, type Producer } from '../../topics/index.js';
import type { Directory } from '../directory.js';
import { removeNumbersOf } from './delete.js';

const LOG_DEADLINE_MS = 5_000;

/**
 * Removes the numbers of projects that are no more: what a deletion of a project or an account
 * leaves when its process dies between the tombstones on `gw.config` and the numbers' removal.
 * A project the directory lacks counts as gone only once the directory has applied all that
 * `gw.config` held after the numbers were read, so a project just created is never taken for one.
 * Answers how many projects' numbers it removed.
 */
export async function removeOrphanNumbers(deps: { readonly pool: Pool; readonly producer: Producer; readonly kafka: Kafka; readonly prefix: string; readonly directory: Directory }): Promise<number> {
  const { rows } = await deps.pool.query<{ project_id: string }>('SELECT DISTINCT project_id FROM instances.numbers');
  const unknown = () => rows.map((r) => r.project_id).filter((id) => !deps.directory.projects.has(id));
  if (unknown().length === 0) return 0;
  await deps.directory.reached(await withDeadline(endOffsets(deps.kafka, topicName(topics.config, deps.prefix)), LOG_DEADLINE_MS));
  const gone = unknown();
  await removeNumbersOf(deps, gone);
  return gone.length;
}
