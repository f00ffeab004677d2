import type { Pool } from 'pg';
import { gatheredCalls } from '../../shared/serial.js';
import type { SendStatus } from '../../schemas/records.js';
import { LATEST_CHANGE } from './changes.js';

/** One page, newest first; `after` is the sort key (time, id) of the last row of the previous page. */
export interface Page {
  readonly limit: number;
  readonly after?: { readonly at: Date; readonly id: string };
}

export interface ConversationRow {
  readonly jid: string;
  readonly name: string | null;
  readonly last_instance_id: string;
  readonly instance_ids: string[];
  readonly last_message_id: string;
  readonly last_message_at: Date;
  readonly last_message_type: string;
  readonly last_message_direction: 'in' | 'out';
  readonly last_message_preview: string | null;
  readonly unread_count: number;
}

/** A message as the history reads it. */
export interface StoredMessage {
  readonly message_id: string;
  readonly instance_id: string;
  readonly jid: string;
  readonly direction: 'in' | 'out';
  readonly origin: string;
  readonly type: string;
  readonly body: string | null;
  readonly media_id: string | null;
  readonly media_mime_type: string | null;
  readonly media_filename: string | null;
  /** bigint, as pg returns it. */
  readonly media_size: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly poll_name: string | null;
  readonly poll_options: string[] | null;
  readonly vote_poll_message_id: string | null;
  readonly vote_selected: string[] | null;
  readonly code_masked: string | null;
  readonly occurred_at: Date;
  readonly wa_message_id: string | null;
  readonly quoted_id: string | null;
  readonly quoted_participant: string | null;
  readonly sender_jid: string | null;
  readonly sender_lid: string | null;
  readonly sender_name: string | null;
  readonly from_jid: string | null;
  readonly to_jid: string | null;
  readonly group_jid: string | null;
  readonly group_name: string | null;
  readonly mentions: string[];
  readonly status: 'queued' | SendStatus | null;
  readonly queued_at: Date | null;
  readonly sent_at: Date | null;
  readonly delivered_at: Date | null;
  readonly read_at: Date | null;
  readonly failed_at: Date | null;
  readonly error_code: string | null;
  readonly client_reference: string | null;
  /** The latest edit or deletion of the message (message_changes), if any. */
  readonly change_kind: 'edit' | 'delete' | null;
  readonly change_body: string | null;
  readonly changed_at: Date | null;
}

/** The number that last talked with this customer (or group) in the project: conversation affinity of sends. */
export async function lastInstanceFor(db: Pool, projectId: string, customerJid: string): Promise<string | null> {
  const { rows } = await db.query<{ last_instance_id: string }>(
    'SELECT last_instance_id FROM conversations.conversations WHERE project_id = $1 AND jid = $2',
    [projectId, customerJid],
  );
  return rows[0]?.last_instance_id ?? null;
}

/**
 * `lastInstanceFor` as each send asks it: the lookups of a project asked while one of its lookups
 * is in flight are made together, in one read (a burst of sends to new customers costs one round
 * trip, not one each).
 */
export function lastInstanceReader(db: Pool): (projectId: string, customerJid: string) => Promise<string | null> {
  return gatheredCalls(async (projectId: string, jids: readonly string[]) => {
    const numbers = await lastInstancesFor(db, projectId, jids);
    return jids.map((jid) => numbers.get(jid) ?? null);
  });
}

/** The number that last talked with each of these customers in the project, in one read (a campaign's tick). */
export async function lastInstancesFor(db: Pool, projectId: string, customerJids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ jid: string; last_instance_id: string }>(
    'SELECT jid, last_instance_id FROM conversations.conversations WHERE project_id = $1 AND jid = ANY($2::text[])',
    [projectId, customerJids],
  );
  return new Map(rows.map((row) => [row.jid, row.last_instance_id]));
}

/** The project's conversations, newest message first; with `instanceId`, those that number took part in. */
export async function listConversations(db: Pool, projectId: string, instanceId: string | undefined, page: Page): Promise<ConversationRow[]> {
  const { rows } = await db.query<ConversationRow>(
    `SELECT c.jid, c.name, c.last_instance_id, c.last_message_id, c.last_message_at, c.last_message_type,
            c.last_message_direction, c.last_message_preview, c.unread_count,
            ARRAY(SELECT n.instance_id FROM conversations.conversation_numbers n
                  WHERE n.project_id = c.project_id AND n.jid = c.jid ORDER BY n.instance_id) AS instance_ids
     FROM conversations.conversations c
     WHERE c.project_id = $1
       AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM conversations.conversation_numbers n
                                        WHERE n.project_id = c.project_id AND n.instance_id = $2 AND n.jid = c.jid))
       AND ($3::timestamptz IS NULL OR (c.last_message_at, c.jid) < ($3, $4))
     ORDER BY c.last_message_at DESC, c.jid DESC
     LIMIT $5`,
    [projectId, instanceId ?? null, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}

export async function conversationExists(db: Pool, projectId: string, jid: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM conversations.conversations WHERE project_id = $1 AND jid = $2', [projectId, jid]);
  return rowCount === 1;
}

/** A conversation's messages, newest first. */
export async function listMessages(db: Pool, projectId: string, jid: string, page: Page): Promise<StoredMessage[]> {
  const { rows } = await db.query<StoredMessage>(
    `SELECT m.*, change.* FROM conversations.messages m
     ${LATEST_CHANGE}
     WHERE m.project_id = $1 AND m.jid = $2 AND m.type IS NOT NULL
       AND ($3::timestamptz IS NULL OR (m.occurred_at, m.message_id) < ($3, $4))
     ORDER BY m.occurred_at DESC, m.message_id DESC
     LIMIT $5`,
    [projectId, jid, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}
