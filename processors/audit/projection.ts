import type { PoolClient } from 'pg';
import type { AuditRecord } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import { on, type Projection } from '../runtime/projection.js';

/** The audit log from `gw.audit`: one row per entry, the entry's id making a repeat harmless. */
export const auditProjection: Projection = {
  name: 'audit',
  ddl: [
    `CREATE TABLE IF NOT EXISTS entries (
      entry_id text PRIMARY KEY,
      account_id text,
      action text NOT NULL,
      target_id text NOT NULL,
      actor_kind text NOT NULL,
      actor_id text NOT NULL,
      ip text NOT NULL,
      user_agent text,
      occurred_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS entries_newest ON entries (account_id, occurred_at DESC, entry_id DESC)`,
  ],
  handlers: [on(topics.audit, applyAuditRecord)],
};

async function applyAuditRecord(tx: PoolClient, record: AuditRecord | null): Promise<void> {
  if (record === null) return;
  await tx.query(
    `INSERT INTO entries (entry_id, account_id, action, target_id, actor_kind, actor_id, ip, user_agent, occurred_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (entry_id) DO NOTHING`,
    [record.event_id, record.account_id, record.action, record.target_id, record.actor_kind, record.actor_id, record.ip, record.user_agent, new Date(record.occurred_at)],
  );
}
