import type { Pool } from 'pg';
import type { InstanceStatus } from '../../schemas/records.js';

export interface InstanceRow {
  readonly instance_id: string;
  readonly account_id: string;
  readonly project_id: string;
  readonly phone: string | null;
  readonly nickname: string | null;
  readonly status: InstanceStatus;
  readonly health_score: number;
  readonly pool_ids: string[];
  readonly connector: string;
  readonly status_changed_at: Date | null;
  readonly updated_at: Date;
}

/** The project's numbers from the `instances` projection. */
export async function projectInstances(pool: Pool, projectId: string): Promise<InstanceRow[]> {
  const { rows } = await pool.query<InstanceRow>(
    `SELECT instance_id, account_id, project_id, phone, nickname, status, health_score, pool_ids, connector, status_changed_at, updated_at
     FROM instances.numbers WHERE project_id = $1 ORDER BY instance_id`,
    [projectId],
  );
  return rows;
}

export async function projectInstance(pool: Pool, projectId: string, instanceId: string): Promise<InstanceRow | undefined> {
  const { rows } = await pool.query<InstanceRow>(
    `SELECT instance_id, account_id, project_id, phone, nickname, status, health_score, pool_ids, connector, status_changed_at, updated_at
     FROM instances.numbers WHERE project_id = $1 AND instance_id = $2`,
    [projectId, instanceId],
  );
  return rows[0];
}
