import { topics } from '../../topics/index.js';
import { on, type Projection } from '../runtime/projection.js';

/**
 * Partner connections, one row per connection with its current state: the lists of
 * `/partner/connections`, `/platform/partners/{id}/connections` and `/me/connections`. Built from
 * the compacted `gw.connections` topic, whose last record per key is the whole current state, so
 * a replay from offset zero rebuilds the same rows.
 */
export const connectionsProjection: Projection = {
  name: 'connections',
  ddl: [
    `CREATE TABLE IF NOT EXISTS connections (
      connection_id text PRIMARY KEY,
      partner_id text NOT NULL,
      external_id text NOT NULL,
      status text NOT NULL,
      account_id text,
      project_id text,
      customer jsonb NOT NULL,
      revoked_by text,
      created_at timestamptz NOT NULL,
      activated_at timestamptz,
      suspended_at timestamptz,
      revoked_at timestamptz,
      updated_at timestamptz NOT NULL,
      last_event_id text NOT NULL,
      UNIQUE (partner_id, external_id)
    )`,
    `CREATE INDEX IF NOT EXISTS connections_by_account ON connections (account_id)`,
  ],
  handlers: [
    on(topics.connections, async (tx, t, meta) => {
      if (t === null) {
        await tx.query('DELETE FROM connections WHERE connection_id = $1', [meta.key]);
        return;
      }
      const at = (ms: number | null) => (ms === null ? null : new Date(ms));
      await tx.query(
        `INSERT INTO connections (connection_id, partner_id, external_id, status, account_id, project_id, customer, revoked_by,
                                  created_at, activated_at, suspended_at, revoked_at, updated_at, last_event_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT (connection_id) DO UPDATE SET
           status = EXCLUDED.status, account_id = EXCLUDED.account_id, project_id = EXCLUDED.project_id,
           customer = EXCLUDED.customer, revoked_by = EXCLUDED.revoked_by, activated_at = EXCLUDED.activated_at,
           suspended_at = EXCLUDED.suspended_at, revoked_at = EXCLUDED.revoked_at, updated_at = EXCLUDED.updated_at,
           last_event_id = EXCLUDED.last_event_id`,
        [
          t.connection_id, t.partner_id, t.external_id, t.to_status, t.account_id, t.project_id, JSON.stringify(t.customer),
          t.revoked_by, at(t.created_at), at(t.activated_at), at(t.suspended_at), at(t.revoked_at), at(t.occurred_at), t.event_id,
        ],
      );
    }),
  ],
};
