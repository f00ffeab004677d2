import type { PoolClient } from 'pg';
import { publishEvents } from '../../events/publish.js';
import { KEYWORD_SOURCE, optedOutEvent } from '../../events/renderers/index.js';
import { contactId, keywordOptOutEventId } from '../../schemas/contact-ids.js';
import type { ContactEvent, InboundMessage } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import { on, type Projection, type RecordMeta } from '../runtime/projection.js';
import { keywordOptOutPhone } from './keyword-optout.js';
import { applyOptChange, ensureContact, upsertContact } from './store.js';
import { applyContactState, publishContactState } from './changelog.js';

const NAME = 'contacts';

export interface ContactsProjectionOptions {
  /** Where `contact.opted_out` events go. */
  readonly producer: Producer;
  /**
   * `live` emits the event of every keyword opt-out it applies. `replay` emits only those of
   * records the live projection has not applied yet: nothing is announced twice, and a record
   * that arrives while the replay swaps in (which the live runner then skips) is not lost.
   */
  readonly mode: 'live' | 'replay';
}

/**
 * The account-wide contact base (spec 5): contacts written by the API on `gw.contacts`, and
 * customers who opt out by sending a keyword (`gw.messages.inbound`), which also emits the
 * public `contact.opted_out` event.
 */
export function contactsProjection(options: ContactsProjectionOptions): Projection {
  return {
    name: NAME,
    ddl: [
      `CREATE TABLE IF NOT EXISTS contacts (
        contact_id text PRIMARY KEY,
        account_id text NOT NULL,
        phone text NOT NULL,
        name text,
        tags text[] NOT NULL,
        opted_out boolean NOT NULL DEFAULT false,
        opted_out_at timestamptz,
        opt_out_source text,
        opt_changed_at timestamptz,
        opt_event_id text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        UNIQUE (account_id, phone)
      )`,
      `CREATE INDEX IF NOT EXISTS contacts_newest ON contacts (account_id, created_at DESC, contact_id DESC)`,
      `CREATE INDEX IF NOT EXISTS contacts_tags ON contacts USING gin (tags)`,
      // Added after the table: the zone a campaign to contacts keeps the sending hours in.
      `ALTER TABLE contacts ADD COLUMN IF NOT EXISTS time_zone text`,
    ],
    // Live, every change is written to the changelog; a replay reads it back, so contacts and
    // opt-outs older than the retention of gw.contacts and gw.messages.inbound are rebuilt too.
    handlers:
      options.mode === 'live'
        ? [on(topics.contacts, applyContactEvent(options)), on(topics.inboundMessages, keywordOptOut(options))]
        : [on(topics.contactStates, (tx, state, meta) => applyContactState(tx, state, meta.key)), on(topics.contacts, applyContactEvent(options)), on(topics.inboundMessages, keywordOptOut(options))],
    changelogCovers: options.mode === 'replay' ? [topics.contacts, topics.inboundMessages] : [],
  };
}

function applyContactEvent(options: ContactsProjectionOptions) {
  return async (tx: PoolClient, event: ContactEvent | null, meta: RecordMeta): Promise<void> => {
    if (event === null) return;
    await applyContactChange(tx, event);
    if (await isNews(options, tx, meta)) await publishContactState(tx, options.producer, event.contact_id, event.event_id);
  };
}

/** Whether what this record changed is announced here: always live; in a replay, only what the live projection has not applied. */
async function isNews(options: ContactsProjectionOptions, tx: PoolClient, meta: RecordMeta): Promise<boolean> {
  return options.mode === 'live' || !(await liveHasApplied(tx, meta));
}

async function applyContactChange(tx: PoolClient, event: ContactEvent): Promise<void> {
  await upsertContact(tx, {
    contactId: event.contact_id,
    accountId: event.account_id,
    phone: event.phone,
    name: event.name,
    tags: event.tags,
    timeZone: event.time_zone,
    at: event.occurred_at,
  });
  if (event.kind === 'upserted') return;
  await applyOptChange(tx, event.contact_id, {
    optedOut: event.kind === 'opted_out',
    at: event.occurred_at,
    source: event.source,
    eventId: event.event_id,
  });
}

function keywordOptOut(options: ContactsProjectionOptions) {
  return async (tx: PoolClient, message: InboundMessage | null, meta: RecordMeta): Promise<void> => {
    const phone = message === null ? undefined : keywordOptOutPhone(message);
    if (message === null || phone === undefined) return;
    const id = contactId(message.account_id, phone);
    const eventId = keywordOptOutEventId(message.event_id);
    await ensureContact(tx, { contactId: id, accountId: message.account_id, phone, name: null, tags: [], timeZone: null, at: message.occurred_at });
    const optedOut = await applyOptChange(tx, id, { optedOut: true, at: message.occurred_at, source: KEYWORD_SOURCE, eventId });
    if (!(await isNews(options, tx, meta))) return;
    await publishContactState(tx, options.producer, id, eventId);
    if (!optedOut) return;
    // Sent before the batch commits: a batch retried after a failure sends it again with the
    // same event id, which receivers de-duplicate on (spec 6.3, at least once).
    await publishEvents(options.producer, [optedOutEvent(message, { id, phone }, eventId)]);
  };
}

/** Whether the live projection (the schema a replay will replace) has applied this record. */
async function liveHasApplied(tx: PoolClient, meta: RecordMeta): Promise<boolean> {
  const { rows } = await tx.query<{ present: boolean }>(`SELECT to_regclass('${NAME}._offsets') IS NOT NULL AS present`);
  // Without a live projection there is nothing to take over from: the past is not announced again.
  if (rows[0]?.present !== true) return true;
  const { rows: offsets } = await tx.query<{ next_offset: string }>(
    `SELECT next_offset FROM ${NAME}._offsets WHERE topic = $1 AND partition = $2`,
    [meta.topic, meta.partition],
  );
  return offsets[0] !== undefined && Number(offsets[0].next_offset) > meta.offset;
}
