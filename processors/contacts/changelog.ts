import type { Pool, PoolClient } from 'pg';
import { asAccountId, asEventId } from '../../schemas/ids.js';
import type { ContactState } from '../../schemas/records.js';
import { endOffsets, topicName, topics, type Kafka, type Producer, type TopicSerdes } from '../../topics/index.js';
import { projectionLockKey } from '../runtime/store.js';
import { applyOptChange, upsertContact } from './store.js';

interface ContactRow {
  contact_id: string;
  account_id: string;
  phone: string;
  name: string | null;
  tags: string[];
  time_zone: string | null;
  opted_out: boolean;
  opted_out_at: Date | null;
  opt_out_source: string | null;
  opt_changed_at: Date | null;
  opt_event_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Writes the contact's state as the transaction sees it to `gw.contacts.state`, before the batch
 * commits: a change of the same contact in another batch waits on the row's lock, so the topic
 * gets the states in the order they were applied, and a batch retried writes the same state again.
 */
export async function publishContactState(tx: PoolClient, producer: Producer, contactId: string, eventId: string): Promise<void> {
  const { rows } = await tx.query<ContactRow>(`SELECT * FROM contacts WHERE contact_id = $1`, [contactId]);
  const row = rows[0];
  if (row === undefined) return;
  await producer.send(topics.contactStates, [{ key: contactId, value: stateOf(row, eventId) }]);
}

function stateOf(row: ContactRow, eventId: string): ContactState {
  return {
    event_id: asEventId(eventId),
    occurred_at: row.updated_at.getTime(),
    account_id: asAccountId(row.account_id),
    project_id: null,
    instance_id: null,
    contact_id: row.contact_id,
    phone: row.phone,
    name: row.name,
    tags: row.tags,
    opted_out: row.opted_out,
    opted_out_at: row.opted_out_at?.getTime() ?? null,
    opt_out_source: row.opt_out_source,
    opt_changed_at: row.opt_changed_at?.getTime() ?? null,
    opt_event_id: row.opt_event_id,
    created_at: row.created_at.getTime(),
    time_zone: row.time_zone,
  };
}

/**
 * Applies a contact's state in a replay. Its opt change is ordered with those of the event topics
 * by time and id, as they are among themselves; its name and tags may be overwritten by an older
 * `gw.contacts` record the log still holds, which the later ones of that account's partition
 * (ending with the one this state came from) then set right again.
 */
export async function applyContactState(tx: PoolClient, state: ContactState | null, key: string | null): Promise<void> {
  if (state === null) {
    if (key !== null) await tx.query(`DELETE FROM contacts WHERE contact_id = $1`, [key]);
    return;
  }
  await upsertContact(tx, { contactId: state.contact_id, accountId: state.account_id, phone: state.phone, name: state.name, tags: state.tags, timeZone: state.time_zone, at: state.created_at });
  await tx.query(`UPDATE contacts SET updated_at = GREATEST(updated_at, $2) WHERE contact_id = $1`, [state.contact_id, new Date(state.occurred_at)]);
  if (state.opt_changed_at === null || state.opt_event_id === null) return;
  await applyOptChange(tx, state.contact_id, { optedOut: state.opted_out, at: state.opt_changed_at, source: state.opt_out_source ?? 'api', eventId: state.opt_event_id });
}

/** Rows written to the changelog per statement and request when seeding it. */
const SEED_PAGE = 1_000;

/**
 * A deployment whose contacts predate the changelog writes them all to it once, the first time a
 * processor starts with an empty `gw.contacts.state`. It holds the projection's lock exclusively,
 * so no live batch writes a newer state of a contact in between, and a second processor starting
 * at the same time finds the changelog written. Returns how many contacts it wrote.
 */
export async function seedContactStates(deps: { pool: Pool; producer: Producer; kafka: Kafka; serdes: TopicSerdes }): Promise<number> {
  const client = await deps.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [projectionLockKey({ name: 'contacts' })]);
    const { rows: present } = await client.query<{ present: boolean }>(`SELECT to_regclass('contacts.contacts') IS NOT NULL AS present`);
    const ends = await endOffsets(deps.kafka, topicName(topics.contactStates, deps.serdes.prefix));
    if (present[0]?.present !== true || [...ends.values()].some((end) => end > 0)) {
      await client.query('COMMIT');
      return 0;
    }
    let written = 0;
    let after = '';
    for (;;) {
      const { rows } = await client.query<ContactRow>(`SELECT * FROM contacts.contacts WHERE contact_id > $1 ORDER BY contact_id LIMIT ${SEED_PAGE}`, [after]);
      if (rows.length === 0) break;
      await deps.producer.send(topics.contactStates, rows.map((row) => ({ key: row.contact_id, value: stateOf(row, row.opt_event_id ?? `seed:${row.contact_id}`) })));
      written += rows.length;
      after = rows[rows.length - 1]!.contact_id;
    }
    await client.query('COMMIT');
    return written;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
