import { topics } from '../../topics/index.js';
import { on, type Projection } from '../runtime/projection.js';

/**
 * The registry of numbers: one row per instance with its current state, read by GET /instances
 * and by number choice. Built from the compacted `gw.instances` topic.
 */
export const instancesProjection: Projection = {
  name: 'instances',
  ddl: [
    `CREATE TABLE IF NOT EXISTS numbers (
      instance_id text PRIMARY KEY,
      account_id text NOT NULL,
      project_id text NOT NULL,
      phone text,
      nickname text,
      status text NOT NULL,
      reason text,
      health_score integer NOT NULL,
      pool_ids text[] NOT NULL,
      connector text NOT NULL,
      status_changed_at timestamptz,
      updated_at timestamptz NOT NULL,
      last_event_id text NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS numbers_by_project ON numbers (project_id, status)`,
  ],
  handlers: [
    on(topics.instances, async (tx, state, meta) => {
      if (state === null || state.deleted) {
        await tx.query('DELETE FROM numbers WHERE instance_id = $1', [state?.instance_id ?? meta.key]);
        return;
      }
      const at = new Date(state.occurred_at);
      await tx.query(
        `INSERT INTO numbers (instance_id, account_id, project_id, phone, nickname, status, reason, health_score,
                              pool_ids, connector, status_changed_at, updated_at, last_event_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (instance_id) DO UPDATE SET
           account_id = EXCLUDED.account_id, project_id = EXCLUDED.project_id, phone = EXCLUDED.phone,
           nickname = EXCLUDED.nickname, status = EXCLUDED.status, reason = EXCLUDED.reason,
           health_score = EXCLUDED.health_score, pool_ids = EXCLUDED.pool_ids, connector = EXCLUDED.connector,
           status_changed_at = COALESCE(EXCLUDED.status_changed_at, numbers.status_changed_at),
           updated_at = EXCLUDED.updated_at, last_event_id = EXCLUDED.last_event_id`,
        [
          state.instance_id, state.account_id, state.project_id, state.phone, state.nickname, state.status,
          state.reason, state.health_score, state.pool_ids, state.connector,
          state.previous_status === null ? null : at, at, state.event_id,
        ],
      );
    }),
  ],
};
