import type { PoolClient } from 'pg';
import type { MessageStatus } from '../../schemas/records.js';
import type { MessageRow } from './rows.js';

/**
 * Writes of the conversations projection. Every write is a merge that gives the same result in
 * any order of arrival, because a replay reads the three topics in another interleaving than the
 * live run did: status facts may come before their send, and conversations are recomputed from
 * their messages rather than updated step by step.
 */

// A row a status fact created before its send arrived keeps what the send cannot know.
const KEPT_FROM_STATUS = new Set(['message_id', 'status', 'wa_message_id']);

/** Records a message once; a send also completes the row its early status facts created. */
export async function recordMessage(tx: PoolClient, row: MessageRow): Promise<void> {
  const columns = Object.keys(row) as (keyof MessageRow)[];
  const { rowCount } = await tx.query(
    `INSERT INTO messages (${columns.join(', ')})
     VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})
     ON CONFLICT (message_id) DO UPDATE SET
       ${columns.filter((c) => !KEPT_FROM_STATUS.has(c)).map((c) => `${c} = EXCLUDED.${c}`).join(', ')}
     WHERE messages.type IS NULL`,
    columns.map((c) => row[c]),
  );
  if (rowCount === 0) return;
  await tx.query(
    'INSERT INTO conversation_numbers (project_id, jid, instance_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [row.project_id, row.jid, row.instance_id],
  );
  await refreshConversation(tx, row.project_id, row.jid);
}

const STATUS_TIME = { sent: 'sent_at', delivered: 'delivered_at', read: 'read_at', failed: 'failed_at' } as const;

/**
 * A status fact of one of our sends. The status moves only forward (queued < sent < delivered <
 * read) and failed is final; each status keeps the time it was first reached.
 */
export async function applyStatus(tx: PoolClient, fact: MessageStatus): Promise<void> {
  const at = STATUS_TIME[fact.status];
  await tx.query(
    `INSERT INTO messages (message_id, account_id, project_id, instance_id, jid, direction, occurred_at, to_jid,
                           status, ${at}, wa_message_id, error_code, client_reference)
     VALUES ($1, $2, $3, $4, $5, 'out', $6, $5, $7, $6, $8, $9, $10)
     ON CONFLICT (message_id) DO UPDATE SET
       status = CASE
         WHEN 'failed' IN (messages.status, EXCLUDED.status) THEN 'failed'
         WHEN array_position(ARRAY['queued', 'sent', 'delivered', 'read'], EXCLUDED.status)
            > array_position(ARRAY['queued', 'sent', 'delivered', 'read'], messages.status) THEN EXCLUDED.status
         ELSE messages.status
       END,
       ${at} = LEAST(messages.${at}, EXCLUDED.${at}),
       wa_message_id = COALESCE(messages.wa_message_id, EXCLUDED.wa_message_id),
       error_code = COALESCE(messages.error_code, EXCLUDED.error_code)`,
    [
      fact.message_id, fact.account_id, fact.project_id, fact.instance_id, fact.to, new Date(fact.occurred_at),
      fact.status, fact.wa_message_id, fact.error_code, fact.client_reference,
    ],
  );
}

/**
 * Recomputes a conversation from its messages: the last message (time, then id), the name the
 * newest message that carries one gives, and as unread the received messages after our last
 * outgoing one (a send or the owner's reply from the phone).
 */
async function refreshConversation(tx: PoolClient, projectId: string, jid: string): Promise<void> {
  await tx.query(
    `WITH chat AS NOT MATERIALIZED (
       SELECT * FROM messages WHERE project_id = $1 AND jid = $2 AND type IS NOT NULL
     ), latest AS (
       SELECT * FROM chat ORDER BY occurred_at DESC, message_id DESC LIMIT 1
     ), replied AS (
       SELECT occurred_at, message_id FROM chat WHERE direction = 'out' ORDER BY occurred_at DESC, message_id DESC LIMIT 1
     )
     INSERT INTO conversations (project_id, jid, account_id, name, last_instance_id, last_message_id, last_message_at,
                                last_message_type, last_message_direction, last_message_preview, unread_count)
     SELECT latest.project_id, latest.jid, latest.account_id,
            (SELECT chat_name FROM chat WHERE chat_name IS NOT NULL ORDER BY occurred_at DESC, message_id DESC LIMIT 1),
            latest.instance_id, latest.message_id, latest.occurred_at, latest.type, latest.direction, left(latest.body, 200),
            (SELECT count(*) FROM chat
              WHERE direction = 'in'
                AND (occurred_at, message_id) > (COALESCE((SELECT occurred_at FROM replied), '-infinity'),
                                                 COALESCE((SELECT message_id FROM replied), '')))
     FROM latest
     ON CONFLICT (project_id, jid) DO UPDATE SET
       name = EXCLUDED.name, last_instance_id = EXCLUDED.last_instance_id, last_message_id = EXCLUDED.last_message_id,
       last_message_at = EXCLUDED.last_message_at, last_message_type = EXCLUDED.last_message_type,
       last_message_direction = EXCLUDED.last_message_direction, last_message_preview = EXCLUDED.last_message_preview,
       unread_count = EXCLUDED.unread_count`,
    [projectId, jid],
  );
}
