import type { PoolClient } from 'pg';

/** A contact as records carry it: the current phone, name, tags and time zone. */
export interface ContactFields {
  readonly contactId: string;
  readonly accountId: string;
  readonly phone: string;
  readonly name: string | null;
  readonly tags: readonly string[];
  /** IANA zone; null when unknown. */
  readonly timeZone: string | null;
  /** Record time. */
  readonly at: number;
}

export interface OptChange {
  readonly optedOut: boolean;
  readonly at: number;
  readonly source: string;
  readonly eventId: string;
}

/** Creates the contact or takes the name, tags and time zone of the record (records of `gw.contacts` carry the full current values). */
export async function upsertContact(tx: PoolClient, contact: ContactFields): Promise<void> {
  await tx.query(
    `INSERT INTO contacts (contact_id, account_id, phone, name, tags, time_zone, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $7, $6, $6)
     ON CONFLICT (contact_id) DO UPDATE SET
       name = EXCLUDED.name, tags = EXCLUDED.tags, time_zone = EXCLUDED.time_zone,
       created_at = LEAST(contacts.created_at, EXCLUDED.created_at),
       updated_at = GREATEST(contacts.updated_at, EXCLUDED.updated_at)`,
    [contact.contactId, contact.accountId, contact.phone, contact.name, contact.tags, new Date(contact.at), contact.timeZone],
  );
}

/**
 * Creates the contact if it is unknown and leaves a known one as it is: name, tags and zone belong to
 * `gw.contacts`, whose order relative to other topics a replay does not keep.
 */
export async function ensureContact(tx: PoolClient, contact: ContactFields): Promise<void> {
  await tx.query(
    `INSERT INTO contacts (contact_id, account_id, phone, name, tags, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (contact_id) DO UPDATE SET
       created_at = LEAST(contacts.created_at, EXCLUDED.created_at),
       updated_at = GREATEST(contacts.updated_at, EXCLUDED.updated_at)`,
    [contact.contactId, contact.accountId, contact.phone, contact.name, contact.tags, new Date(contact.at)],
  );
}

/**
 * Opts a contact out or in, unless a later change (by record time, then event id) is already
 * applied: opt-outs come from two topics, so the last one by time wins in any order of arrival.
 * True when this change moved the contact from opted in to opted out.
 */
export async function applyOptChange(tx: PoolClient, contactId: string, change: OptChange): Promise<boolean> {
  const { rows } = await tx.query<{ was_opted_out: boolean }>(
    `UPDATE contacts SET
       opted_out = $2::boolean,
       opted_out_at = CASE WHEN $2::boolean THEN $3::timestamptz END,
       opt_out_source = CASE WHEN $2::boolean THEN $4 END,
       opt_changed_at = $3::timestamptz,
       opt_event_id = $5,
       updated_at = GREATEST(contacts.updated_at, $3::timestamptz)
     FROM (SELECT contact_id, opted_out FROM contacts WHERE contact_id = $1 FOR UPDATE) AS before
     WHERE contacts.contact_id = before.contact_id
       AND (contacts.opt_changed_at IS NULL OR (contacts.opt_changed_at, contacts.opt_event_id) < ($3::timestamptz, $5))
     RETURNING before.opted_out AS was_opted_out`,
    [contactId, change.optedOut, new Date(change.at), change.source, change.eventId],
  );
  const applied = rows[0];
  return applied !== undefined && change.optedOut && !applied.was_opted_out;
}
