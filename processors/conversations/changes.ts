import type { PoolClient } from 'pg';
import type { InboundMessage, SendCommand } from '../../schemas/records.js';

/**
 * Edits and deletions of earlier messages (ours through the API, the customer's, or the owner's
 * from the phone), kept apart from the messages they change: the history shows each message with
 * its latest change, joined by network id when read. A change recorded before the message it is
 * about (a replay reads the topics in another interleaving) applies once that message arrives.
 */
export const changesDdl = [
  `CREATE TABLE IF NOT EXISTS message_changes (
    change_id text PRIMARY KEY,
    project_id text NOT NULL,
    instance_id text NOT NULL,
    target_wa_id text NOT NULL,
    kind text NOT NULL,
    body text,
    occurred_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS message_changes_target ON message_changes (project_id, instance_id, target_wa_id, occurred_at DESC)`,
];

export interface ChangeRow {
  /** The message id of the edit or deletion itself (its send, or its inbound record). */
  readonly change_id: string;
  readonly project_id: string;
  readonly instance_id: string;
  readonly target_wa_id: string;
  readonly kind: 'edit' | 'delete';
  readonly body: string | null;
  readonly occurred_at: Date;
}

/** The change a send or a received record carries; undefined for any other message. */
export function changeRow(record: SendCommand | InboundMessage): ChangeRow | undefined {
  const { content } = record;
  if (content.kind !== 'edit' && content.kind !== 'delete') return undefined;
  return {
    change_id: record.message_id,
    project_id: record.project_id,
    instance_id: record.instance_id,
    target_wa_id: content.quoted_message_id,
    kind: content.kind,
    body: content.kind === 'edit' ? content.body : null,
    occurred_at: new Date(record.occurred_at),
  };
}

export const isChange = (record: SendCommand | InboundMessage) => record.content.kind === 'edit' || record.content.kind === 'delete';

/** Records changes once each; returns those it had not recorded before. */
export async function recordChanges(tx: PoolClient, rows: readonly ChangeRow[]): Promise<ChangeRow[]> {
  if (rows.length === 0) return [];
  const { rows: recorded } = await tx.query<ChangeRow>(
    `INSERT INTO message_changes SELECT * FROM jsonb_populate_recordset(NULL::message_changes, $1::jsonb) ON CONFLICT (change_id) DO NOTHING RETURNING *`,
    [JSON.stringify(rows)],
  );
  return recorded;
}

/**
 * The latest change of each message as the history reads it (a lateral join on `m`): a deletion
 * wins over any edit; a send of ours that failed changed nothing.
 */
export const LATEST_CHANGE = `LEFT JOIN LATERAL (
    SELECT c.kind AS change_kind, c.body AS change_body, c.occurred_at AS changed_at FROM conversations.message_changes c
    WHERE c.project_id = m.project_id AND c.instance_id = m.instance_id AND c.target_wa_id = m.wa_message_id
      AND NOT EXISTS (SELECT 1 FROM conversations.messages f WHERE f.message_id = c.change_id AND f.status = 'failed')
    ORDER BY c.kind = 'delete' DESC, c.occurred_at DESC LIMIT 1
  ) change ON m.wa_message_id IS NOT NULL`;
