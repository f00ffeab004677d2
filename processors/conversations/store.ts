import type { PoolClient } from 'pg';
import type { MessageStatus, SendStatus } from '../../schemas/records.js';
import type { ApplyScope } from '../runtime/projection.js';
import type { MessageRow, StoredRow } from './rows.js';
import { inPart, type SwapPart } from '../runtime/staging.js';

/**
 * Writes of the conversations projection, a batch of records at a time. Every write is a merge
 * that gives the same result in any order of arrival, because a replay reads the three topics in
 * another interleaving than the live run did: status facts may come before their send, and
 * conversations are recomputed from their messages rather than updated step by step.
 */

// A row a status fact created before its send arrived keeps what the send cannot know.
const KEPT_FROM_STATUS = new Set(['message_id', 'status', 'wa_message_id']);

/**
 * Records messages once each; a send also completes the row its early status facts created.
 * Returns the rows it wrote, as they are now, when `keep` (reading them back costs a third of the
 * statement). Their conversations (and the numbers that took part) follow, unless a replay defers
 * them to `deriveConversations`.
 */
export async function recordMessages(tx: PoolClient, rows: readonly MessageRow[], scope?: ApplyScope, keep = true): Promise<StoredRow[]> {
  // A message id repeated in the batch changes nothing after its first row (the row has a type by then).
  const distinct = firstOfEach(rows, (row) => row.message_id);
  const columns = Object.keys(distinct[0] ?? {});
  if (columns.length === 0) return [];
  const derive = scope?.deferDerived !== true;
  // json, not jsonb: the batch is read once, and parsing it into jsonb first costs about half the statement.
  const { rows: recorded } = await tx.query<StoredRow>(
    `INSERT INTO messages (${columns.join(', ')})
     SELECT ${columns.join(', ')} FROM json_populate_recordset(NULL::messages, $1::json)
     ON CONFLICT (message_id) DO UPDATE SET
       ${columns.filter((c) => !KEPT_FROM_STATUS.has(c)).map((c) => `${c} = EXCLUDED.${c}`).join(', ')}
     WHERE messages.type IS NULL
     ${keep || derive ? 'RETURNING *' : ''}`,
    [JSON.stringify(distinct)],
  );
  if (derive) await recordConversations(tx, recorded);
  return keep ? recorded : [];
}

/** Adds messages that now have a type to their conversations (and the numbers that took part). */
export async function recordConversations(tx: PoolClient, recorded: readonly { project_id: string; jid: string; instance_id: string }[]): Promise<void> {
  if (recorded.length === 0) return;
  await tx.query(
    `INSERT INTO conversation_numbers (project_id, jid, instance_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
    [recorded.map((r) => r.project_id), recorded.map((r) => r.jid), recorded.map((r) => r.instance_id)],
  );
  await refreshConversations(tx, firstOfEach(recorded, (r) => `${r.project_id}\u0000${r.jid}`));
}

/** How a message's row takes the status columns of another write (EXCLUDED) in `ON CONFLICT ... DO UPDATE SET`. */
export const STATUS_MERGE = `
  status = CASE
    WHEN 'failed' IN (messages.status, EXCLUDED.status) THEN 'failed'
    WHEN array_position(ARRAY['queued', 'sent', 'delivered', 'read'], EXCLUDED.status)
       > array_position(ARRAY['queued', 'sent', 'delivered', 'read'], messages.status) THEN EXCLUDED.status
    ELSE messages.status
  END,
  sent_at = LEAST(messages.sent_at, EXCLUDED.sent_at),
  delivered_at = LEAST(messages.delivered_at, EXCLUDED.delivered_at),
  read_at = LEAST(messages.read_at, EXCLUDED.read_at),
  failed_at = LEAST(messages.failed_at, EXCLUDED.failed_at),
  wa_message_id = COALESCE(messages.wa_message_id, EXCLUDED.wa_message_id),
  error_code = COALESCE(messages.error_code, EXCLUDED.error_code),
  error_reason = COALESCE(messages.error_reason, EXCLUDED.error_reason)`;

const STATUS_TIME = { sent: 'sent_at', delivered: 'delivered_at', read: 'read_at', failed: 'failed_at' } as const;
const FORWARD: readonly string[] = ['queued', 'sent', 'delivered', 'read'];

/** The facts of one message merged, as applying them one after another would leave its row. */
interface MergedStatus {
  readonly first: MessageStatus;
  status: string;
  readonly at: Record<(typeof STATUS_TIME)[SendStatus], Date | null>;
  wa_message_id: string | null;
  error_code: string | null;
  error_reason: string | null;
}

/**
 * Status facts of our sends. The status moves only forward (queued < sent < delivered < read) and
 * failed is final; each status keeps the time it was first reached. The facts of one message in
 * the batch are merged first, with the same rule, so each message takes one row of the statement.
 * Returns the rows as they are now when `keep`.
 */
export async function applyStatuses(tx: PoolClient, facts: readonly MessageStatus[], keep = true): Promise<StoredRow[]> {
  const merged = mergeStatuses(facts);
  if (merged.length === 0) return [];
  const column = <T>(pick: (m: MergedStatus) => T) => merged.map(pick);
  const { rows } = await tx.query<StoredRow>(
    `INSERT INTO messages (message_id, account_id, project_id, instance_id, jid, direction, occurred_at, to_jid,
                           status, sent_at, delivered_at, read_at, failed_at, wa_message_id, error_code, error_reason, client_reference)
     SELECT message_id, account_id, project_id, instance_id, jid, 'out', occurred_at, jid,
            status, sent_at, delivered_at, read_at, failed_at, wa_message_id, error_code, error_reason, client_reference
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[],
                 $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::text[], $13::text[], $14::text[], $15::text[])
       AS f(message_id, account_id, project_id, instance_id, jid, occurred_at, status,
            sent_at, delivered_at, read_at, failed_at, wa_message_id, error_code, error_reason, client_reference)
     ON CONFLICT (message_id) DO UPDATE SET ${STATUS_MERGE}
     ${keep ? 'RETURNING *' : ''}`,
    [
      column((m) => m.first.message_id),
      column((m) => m.first.account_id),
      column((m) => m.first.project_id),
      column((m) => m.first.instance_id),
      column((m) => m.first.to),
      column((m) => new Date(m.first.occurred_at)),
      column((m) => m.status),
      column((m) => m.at.sent_at),
      column((m) => m.at.delivered_at),
      column((m) => m.at.read_at),
      column((m) => m.at.failed_at),
      column((m) => m.wa_message_id),
      column((m) => m.error_code),
      column((m) => m.error_reason),
      column((m) => m.first.client_reference),
    ],
  );
  return rows;
}

function mergeStatuses(facts: readonly MessageStatus[]): MergedStatus[] {
  const byMessage = new Map<string, MergedStatus>();
  for (const fact of facts) {
    const at = new Date(fact.occurred_at);
    const merged = byMessage.get(fact.message_id);
    if (!merged) {
      const times = { sent_at: null, delivered_at: null, read_at: null, failed_at: null };
      byMessage.set(fact.message_id, {
        first: fact,
        status: fact.status,
        at: { ...times, [STATUS_TIME[fact.status]]: at },
        wa_message_id: fact.wa_message_id,
        error_code: fact.error_code,
        error_reason: fact.error_reason,
      });
      continue;
    }
    merged.status = laterStatus(merged.status, fact.status);
    const time = STATUS_TIME[fact.status];
    const known = merged.at[time];
    if (known === null || at < known) merged.at[time] = at;
    merged.wa_message_id ??= fact.wa_message_id;
    merged.error_code ??= fact.error_code;
    merged.error_reason ??= fact.error_reason;
  }
  return [...byMessage.values()];
}

/** The status after `next` arrives at a message that has `current` (the CASE of `applyStatuses`). */
function laterStatus(current: string, next: string): string {
  if (current === 'failed' || next === 'failed') return 'failed';
  const from = FORWARD.indexOf(current);
  const to = FORWARD.indexOf(next);
  return from >= 0 && to > from ? next : current;
}

/**
 * Recomputes conversations from their messages: the last message (time, then id), the name the
 * newest message that carries one gives, and as unread the received messages after our last
 * outgoing one (a send or the owner's reply from the phone).
 */
async function refreshConversations(tx: PoolClient, keys: readonly { project_id: string; jid: string }[]): Promise<void> {
  await tx.query(
    `INSERT INTO conversations (project_id, jid, account_id, name, last_instance_id, last_message_id, last_message_at,
                                last_message_type, last_message_direction, last_message_preview, unread_count)
     SELECT latest.project_id, latest.jid, latest.account_id,
            (SELECT m.chat_name FROM messages m
              WHERE m.project_id = k.project_id AND m.jid = k.jid AND m.type IS NOT NULL AND m.chat_name IS NOT NULL
              ORDER BY m.occurred_at DESC, m.message_id DESC LIMIT 1),
            latest.instance_id, latest.message_id, latest.occurred_at, latest.type, latest.direction, left(latest.body, 200),
            (SELECT count(*) FROM messages m
              WHERE m.project_id = k.project_id AND m.jid = k.jid AND m.type IS NOT NULL AND m.direction = 'in'
                AND (m.occurred_at, m.message_id) > (COALESCE(replied.occurred_at, '-infinity'), COALESCE(replied.message_id, '')))
     FROM unnest($1::text[], $2::text[]) AS k(project_id, jid)
     CROSS JOIN LATERAL (
       SELECT * FROM messages m WHERE m.project_id = k.project_id AND m.jid = k.jid AND m.type IS NOT NULL
       ORDER BY m.occurred_at DESC, m.message_id DESC LIMIT 1
     ) latest
     LEFT JOIN LATERAL (
       SELECT m.occurred_at, m.message_id FROM messages m
       WHERE m.project_id = k.project_id AND m.jid = k.jid AND m.type IS NOT NULL AND m.direction = 'out'
       ORDER BY m.occurred_at DESC, m.message_id DESC LIMIT 1
     ) replied ON true
     ON CONFLICT (project_id, jid) DO UPDATE SET
       name = EXCLUDED.name, last_instance_id = EXCLUDED.last_instance_id, last_message_id = EXCLUDED.last_message_id,
       last_message_at = EXCLUDED.last_message_at, last_message_type = EXCLUDED.last_message_type,
       last_message_direction = EXCLUDED.last_message_direction, last_message_preview = EXCLUDED.last_message_preview,
       unread_count = EXCLUDED.unread_count`,
    [keys.map((k) => k.project_id), keys.map((k) => k.jid)],
  );
}

/**
 * Every conversation and its numbers recomputed from the messages at once, as `recordMessages`
 * leaves each after a batch: the numbers are those of the messages that have a type (a message's
 * number and conversation no longer change once it has one), the rest as `refreshConversations`.
 */
export async function deriveConversations(tx: PoolClient, into: 'filled' | 'empty' = 'filled', part?: SwapPart): Promise<void> {
  // The sorts of every message fit in memory; rows inserted in key order touch each index page once.
  await tx.query(`SET LOCAL work_mem TO '256MB'`);
  // Into empty tables without their keys (a replay's), the rows go in as they come and nothing conflicts.
  const onConflict = (clause: string) => (into === 'empty' ? '' : clause);
  // A part (a replay's swap) derives the conversations whose key hashes into it, and their numbers.
  const typed = `type IS NOT NULL${part ? ` AND ${inPart(`project_id || ' ' || jid`, part)}` : ''}`;
  await tx.query(
    `INSERT INTO conversation_numbers (project_id, instance_id, jid)
     SELECT project_id, instance_id, jid FROM messages WHERE ${typed} GROUP BY project_id, instance_id, jid
     ${onConflict('ORDER BY project_id, instance_id, jid ON CONFLICT DO NOTHING')}`,
  );
  // One sort of the typed messages, newest first per conversation, gives each conversation's latest
  // message, newest name and unread count (the messages before its first outgoing one in that order).
  await tx.query(
    `INSERT INTO conversations (project_id, jid, account_id, name, last_instance_id, last_message_id, last_message_at,
                                last_message_type, last_message_direction, last_message_preview, unread_count)
     SELECT DISTINCT ON (project_id, jid) project_id, jid, account_id, (array_agg(chat_name) FILTER (WHERE chat_name IS NOT NULL) OVER w)[1],
            instance_id, message_id, occurred_at, type, direction, left(body, 200),
            COALESCE(min(newer) FILTER (WHERE direction = 'out') OVER w, count(*) OVER w)
     FROM (
       SELECT *, row_number() OVER (PARTITION BY project_id, jid ORDER BY occurred_at DESC, message_id DESC) - 1 AS newer
       FROM messages WHERE ${typed}
     ) m
     WINDOW w AS (PARTITION BY project_id, jid ORDER BY occurred_at DESC, message_id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
     ORDER BY project_id, jid, occurred_at DESC, message_id DESC
     ${onConflict(`ON CONFLICT (project_id, jid) DO UPDATE SET
       name = EXCLUDED.name, last_instance_id = EXCLUDED.last_instance_id, last_message_id = EXCLUDED.last_message_id,
       last_message_at = EXCLUDED.last_message_at, last_message_type = EXCLUDED.last_message_type,
       last_message_direction = EXCLUDED.last_message_direction, last_message_preview = EXCLUDED.last_message_preview,
       unread_count = EXCLUDED.unread_count`)}`,
  );
}

function firstOfEach<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(keyOf(item)) && seen.add(keyOf(item)));
}
