import type { PoolClient } from 'pg';
import type { AudienceRecord } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import { on, type Projection, type RecordMeta } from '../runtime/projection.js';

/**
 * The account's audience lists from `gw.audience` (compacted, kept for ever): suppressed and
 * blocklisted phones, contact groups and their members. Every record is an entry's full state
 * and a tombstone removes it, so a replay from offset zero rebuilds them at any age.
 */
export const audienceProjection: Projection = {
  name: 'audience',
  ddl: [
    `CREATE TABLE IF NOT EXISTS listed_phones (
      entry_id text PRIMARY KEY,
      account_id text NOT NULL,
      list text NOT NULL,
      phone text NOT NULL,
      reason text,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS listed_phones_newest ON listed_phones (account_id, list, created_at DESC, entry_id DESC)`,
    `CREATE INDEX IF NOT EXISTS listed_phones_phone ON listed_phones (account_id, phone)`,
    `CREATE TABLE IF NOT EXISTS contact_groups (
      group_id text PRIMARY KEY,
      account_id text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS contact_groups_newest ON contact_groups (account_id, created_at DESC, group_id DESC)`,
    `CREATE TABLE IF NOT EXISTS group_members (
      member_id text PRIMARY KEY,
      group_id text NOT NULL,
      account_id text NOT NULL,
      contact_id text NOT NULL,
      added_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS group_members_newest ON group_members (group_id, added_at DESC, contact_id DESC)`,
  ],
  handlers: [on(topics.audience, applyAudienceRecord)],
};

async function applyAudienceRecord(tx: PoolClient, record: AudienceRecord | null, meta: RecordMeta): Promise<void> {
  if (record === null) {
    if (meta.key === null) return;
    await tx.query('DELETE FROM listed_phones WHERE entry_id = $1', [meta.key]);
    await tx.query('DELETE FROM group_members WHERE member_id = $1 OR group_id = $1', [meta.key]);
    await tx.query('DELETE FROM contact_groups WHERE group_id = $1', [meta.key]);
    return;
  }
  const { entity } = record;
  switch (entity.kind) {
    case 'listed_phone':
      await tx.query(
        `INSERT INTO listed_phones (entry_id, account_id, list, phone, reason, created_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (entry_id) DO UPDATE SET reason = EXCLUDED.reason, created_at = EXCLUDED.created_at`,
        [record.entity_id, record.account_id, entity.list, entity.phone, entity.reason, new Date(entity.created_at)],
      );
      return;
    case 'contact_group':
      await tx.query(
        `INSERT INTO contact_groups (group_id, account_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (group_id) DO UPDATE SET name = EXCLUDED.name, updated_at = EXCLUDED.updated_at`,
        [record.entity_id, record.account_id, entity.name, new Date(entity.created_at), new Date(record.occurred_at)],
      );
      return;
    case 'group_member':
      await tx.query(
        `INSERT INTO group_members (member_id, group_id, account_id, contact_id, added_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (member_id) DO NOTHING`,
        [record.entity_id, entity.group_id, record.account_id, entity.contact_id, new Date(entity.added_at)],
      );
      return;
  }
}
