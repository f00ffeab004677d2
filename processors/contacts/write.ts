import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { asAccountId, asEventId } from '../../schemas/ids.js';
import type { ContactEvent, ContactEventKind } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config/write.js';
import { listContacts, type ContactRow } from './queries.js';

/** A contact's own values, as `ContactEvent` records carry them. */
export interface ContactValues {
  readonly id: string;
  readonly phone: string;
  readonly name: string | null;
  readonly tags: readonly string[];
  /** IANA zone; null when unknown. */
  readonly time_zone: string | null;
}

/** One change of the account's contact base. None of these is a public event. */
export interface ContactChange {
  readonly kind: ContactEventKind;
  readonly contact: ContactValues;
}

/**
 * Writes changes of an account's contacts to `gw.contacts` (keyed by account), for the contacts
 * processor to apply; resolves once the log has them.
 */
export async function writeContacts(producer: Producer, accountId: string, changes: readonly ContactChange[], source: 'api' | 'import', at: number): Promise<void> {
  const records = changes.map(({ kind, contact }) => ({
    key: accountId,
    value: {
      event_id: asEventId(randomUUID()),
      occurred_at: at,
      account_id: asAccountId(accountId),
      project_id: null,
      instance_id: null,
      kind,
      contact_id: contact.id,
      phone: contact.phone,
      name: contact.name,
      tags: contact.tags,
      time_zone: contact.time_zone,
      source,
    } satisfies ContactEvent,
  }));
  await withDeadline(producer.send(topics.contacts, records), WRITE_DEADLINE_MS);
}

/** Contacts read and rewritten per step of a rename or deletion. */
const STEP = 1000;

/**
 * Rewrites the tags of every contact carrying `tag` with `change`, as `upserted` records of
 * `gw.contacts` (the contacts processor applies them like any other change). Returns how many.
 */
export async function retag(deps: { pool: Pool; producer: Producer }, accountId: string, tag: string, change: (tags: readonly string[]) => string[]): Promise<number> {
  let changed = 0;
  let after: { at: Date; id: string } | undefined;
  for (;;) {
    const rows: ContactRow[] = await listContacts(deps.pool, accountId, { tag }, { limit: STEP, after });
    if (rows.length === 0) return changed;
    const changes = rows.map((row) => ({ kind: 'upserted' as const, contact: { id: row.contact_id, phone: row.phone, name: row.name, tags: change(row.tags), time_zone: row.time_zone } }));
    await writeContacts(deps.producer, accountId, changes, 'api', Date.now());
    changed += rows.length;
    const last = rows[rows.length - 1]!;
    after = { at: last.created_at, id: last.contact_id };
  }
}
