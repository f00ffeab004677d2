import type { Pool, PoolClient } from 'pg';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { MessageRowState, MessageState } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import { projectionLockKey } from '../runtime/store.js';
import { changesDdl, type ChangeRow } from './changes.js';
import type { StoredRow } from './rows.js';

/**
 * The history's changelog, `gw.messages.state`: the latest state of each message, its row of
 * `messages` and, when the message is an edit or a deletion, its row of `message_changes`
 * (keyed by the same message id: both go in one state, or compaction would keep only one).
 */

/** Marks the schema as one whose messages are all on the changelog; it goes before the messages table is created. */
export const changelogDdl = [
  `CREATE TABLE IF NOT EXISTS changelog_seeded (seeded_at timestamptz NOT NULL)`,
  // A schema created now writes every message it takes to the changelog: only one an earlier version created needs seeding.
  `INSERT INTO changelog_seeded SELECT now() WHERE to_regclass('messages') IS NULL AND NOT EXISTS (SELECT 1 FROM changelog_seeded)`,
];

/**
 * Writes the states of the messages a batch changed to `gw.messages.state`, in one request before
 * the batch commits: their rows stay locked until then, so the topic gets each message's states in
 * the order they were applied, and a batch retried writes the same states again.
 */
export async function publishMessageStates(tx: PoolClient, producer: Producer, messages: readonly StoredRow[], changes: readonly ChangeRow[]): Promise<void> {
  const states = await statesOf(tx, messages, changes);
  if (states.length > 0) await producer.send(topics.messageStates, states.map((state) => ({ key: state.message_id, value: state })));
}

/** Completes each message's state with its other half: the change a status-only row may be, the row a change may have. */
async function statesOf(tx: PoolClient, messages: readonly StoredRow[], changes: readonly ChangeRow[]): Promise<MessageState[]> {
  const rows = new Map(messages.map((row) => [row.message_id, row]));
  const changed = new Map(changes.map((change) => [change.change_id, change]));
  // A row with a type is a message of its own, never an edit or deletion (those only get status rows).
  const untyped = messages.filter((row) => row.type === null && !changed.has(row.message_id)).map((row) => row.message_id);
  if (untyped.length > 0) {
    const { rows: found } = await tx.query<ChangeRow>(`SELECT * FROM message_changes WHERE change_id = ANY($1)`, [untyped]);
    for (const change of found) changed.set(change.change_id, change);
  }
  const rowless = changes.filter((change) => !rows.has(change.change_id)).map((change) => change.change_id);
  if (rowless.length > 0) {
    const { rows: found } = await tx.query<StoredRow>(`SELECT * FROM messages WHERE message_id = ANY($1)`, [rowless]);
    for (const row of found) rows.set(row.message_id, row);
  }
  const ids = new Set([...rows.keys(), ...changed.keys()]);
  return [...ids].map((id) => stateOf(id, rows.get(id), changed.get(id)));
}

function stateOf(id: string, row: StoredRow | undefined, change: ChangeRow | undefined): MessageState {
  const times = [row?.occurred_at, row?.queued_at, row?.sent_at, row?.delivered_at, row?.read_at, row?.failed_at, change?.occurred_at];
  const owner = (row ?? change)!;
  return {
    event_id: asEventId(newId('evt')),
    occurred_at: Math.max(...times.flatMap((time) => (time ? [time.getTime()] : []))),
    account_id: row ? asAccountId(row.account_id) : null,
    project_id: asProjectId(owner.project_id),
    instance_id: asInstanceId(owner.instance_id),
    message_id: asMessageId(id),
    message: row ? rowState(row) : null,
    change: change ? { target_wa_id: change.target_wa_id, change_kind: change.kind, body: change.body, occurred_at: change.occurred_at.getTime() } : null,
    error_reason: row?.error_reason ?? null,
    campaign_id: row?.campaign_id ?? null,
  };
}

function rowState(row: StoredRow): MessageRowState {
  const { message_id: _id, account_id: _account, project_id: _project, instance_id: _instance, error_reason: _reason, campaign_id: _campaign, ...columns } = row;
  const ms = (time: Date | null) => time?.getTime() ?? null;
  return {
    ...columns,
    media_size: row.media_size === null ? null : Number(row.media_size),
    occurred_at: row.occurred_at.getTime(),
    queued_at: ms(row.queued_at),
    sent_at: ms(row.sent_at),
    delivered_at: ms(row.delivered_at),
    read_at: ms(row.read_at),
    failed_at: ms(row.failed_at),
  };
}

/** The changes (edits, deletions) the states carry, as `message_changes` rows. */
export function stateChanges(states: readonly MessageState[]): ChangeRow[] {
  return states.flatMap(({ message_id, project_id, instance_id, change }) =>
    change
      ? [{ change_id: message_id, project_id, instance_id, target_wa_id: change.target_wa_id, kind: change.change_kind as ChangeRow['kind'], body: change.body, occurred_at: new Date(change.occurred_at) }]
      : [],
  );
}

/** Rows written to the changelog per statement and request when seeding it. */
const SEED_PAGE = 1_000;

/**
 * A deployment whose history predates the changelog writes it all there once, the first time a
 * processor starts (or a replay runs) with the new version, and marks its schema seeded. It holds
 * the projection's lock exclusively, so no live batch changes a message in between, and a second
 * processor starting at the same time finds the schema marked. Returns how many states it wrote.
 */
export async function seedMessageStates(deps: { pool: Pool; producer: Producer }): Promise<number> {
  const client = await deps.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [projectionLockKey({ name: 'conversations' })]);
    const { rows: marks } = await client.query<{ present: boolean; seeded: boolean }>(
      `SELECT to_regclass('conversations.messages') IS NOT NULL AS present, to_regclass('conversations.changelog_seeded') IS NOT NULL AS seeded`,
    );
    await client.query('SET LOCAL search_path TO conversations');
    const seeded = marks[0]?.seeded === true && (await client.query('SELECT 1 FROM changelog_seeded')).rowCount! > 0;
    if (marks[0]?.present !== true || seeded) {
      await client.query('COMMIT');
      return 0;
    }
    // A version older than edits and deletions has no table of them yet.
    for (const statement of changesDdl) await client.query(statement);
    let written = 0;
    const publish = async (messages: readonly StoredRow[], changes: readonly ChangeRow[]) => {
      const states = await statesOf(client, messages, changes);
      await deps.producer.send(topics.messageStates, states.map((state) => ({ key: state.message_id, value: state })));
      written += states.length;
    };
    for (let after = ''; ; ) {
      const { rows } = await client.query<StoredRow>(`SELECT * FROM messages WHERE message_id > $1 ORDER BY message_id LIMIT ${SEED_PAGE}`, [after]);
      if (rows.length === 0) break;
      await publish(rows, []);
      after = rows[rows.length - 1]!.message_id;
    }
    // Received edits and deletions have no row of their own.
    for (let after = ''; ; ) {
      const { rows } = await client.query<ChangeRow>(
        `SELECT * FROM message_changes c WHERE change_id > $1 AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.message_id = c.change_id)
         ORDER BY change_id LIMIT ${SEED_PAGE}`,
        [after],
      );
      if (rows.length === 0) break;
      await publish([], rows);
      after = rows[rows.length - 1]!.change_id;
    }
    await client.query(changelogDdl[0]!);
    await client.query('INSERT INTO changelog_seeded VALUES (now())');
    await client.query('COMMIT');
    return written;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
