import type { Pool } from 'pg';
import { gatheredCalls } from '../../shared/serial.js';

export type PhoneList = 'suppressions' | 'blocklist';

/** A page newest first; `after` is the (time, id) of the last row of the previous page. */
export interface Page {
  readonly limit: number;
  readonly after?: { readonly at: Date; readonly id: string };
}

export interface ListedPhoneRow {
  readonly entry_id: string;
  readonly phone: string;
  readonly reason: string | null;
  readonly created_at: Date;
}

export interface ContactGroupRow {
  readonly group_id: string;
  readonly name: string;
  readonly members: number;
  readonly created_at: Date;
  readonly updated_at: Date;
}

export interface MemberRow {
  readonly contact_id: string;
  readonly phone: string;
  readonly name: string | null;
  readonly tags: string[];
  readonly opted_out: boolean;
  readonly added_at: Date;
}

/** What keeps a phone from receiving the account's sends: each a spec-level refusal at send time. */
export interface RecipientStanding {
  readonly optedOut: boolean;
  readonly suppressed: boolean;
  readonly blocklisted: boolean;
}

/** A send as far as standing goes: the deletion of one of our messages, a one-time code, or any other message. */
export type StandingKind = 'delete' | 'otp' | 'message';

/**
 * Why this recipient may not get a send of this kind, or undefined. A deletion always goes: it
 * takes back what the recipient received. A one-time code answers the customer's own request, so
 * it goes to an opted-out or suppressed phone; only the blocklist stops it. API sends and
 * campaigns both ask here.
 */
export function standingRefusal(kind: StandingKind, standing: RecipientStanding): 'blocklisted' | 'opted_out' | 'suppressed' | undefined {
  if (kind === 'delete') return undefined;
  if (standing.blocklisted) return 'blocklisted';
  if (kind === 'otp') return undefined;
  if (standing.optedOut) return 'opted_out';
  if (standing.suppressed) return 'suppressed';
  return undefined;
}

/**
 * Reads the standing of one phone of an account, as each send does. The reads of an account asked
 * while one of its reads is in flight are made together, in one query: a burst of sends costs one
 * round trip, not one each.
 */
export function standingReader(db: Pool): (accountId: string, phone: string) => Promise<RecipientStanding> {
  return gatheredCalls(async (accountId: string, phones: readonly string[]) => {
    const standings = await recipientStandings(db, accountId, phones);
    return phones.map((phone) => standings.get(phone)!);
  });
}

/** The standing of each of these E.164 phones of the account, in one read whatever their number (a campaign's tick). */
export async function recipientStandings(db: Pool, accountId: string, phones: readonly string[]): Promise<Map<string, RecipientStanding>> {
  const { rows } = await db.query<{ phone: string; opted_out: boolean; suppressed: boolean; blocklisted: boolean }>(
    `SELECT p.phone,
       EXISTS (SELECT 1 FROM contacts.contacts c WHERE c.account_id = $1 AND c.phone = p.phone AND c.opted_out) AS opted_out,
       EXISTS (SELECT 1 FROM audience.listed_phones l WHERE l.account_id = $1 AND l.phone = p.phone AND l.list = 'suppressions') AS suppressed,
       EXISTS (SELECT 1 FROM audience.listed_phones l WHERE l.account_id = $1 AND l.phone = p.phone AND l.list = 'blocklist') AS blocklisted
     FROM unnest($2::text[]) AS p(phone)`,
    [accountId, phones],
  );
  return new Map(rows.map((row) => [row.phone, { optedOut: row.opted_out, suppressed: row.suppressed, blocklisted: row.blocklisted }]));
}

export async function listedPhone(db: Pool, accountId: string, list: PhoneList, phone: string): Promise<ListedPhoneRow | undefined> {
  const { rows } = await db.query<ListedPhoneRow>(
    'SELECT entry_id, phone, reason, created_at FROM audience.listed_phones WHERE account_id = $1 AND list = $2 AND phone = $3',
    [accountId, list, phone],
  );
  return rows[0];
}

export async function listedPhones(db: Pool, accountId: string, list: PhoneList, page: Page): Promise<ListedPhoneRow[]> {
  const { rows } = await db.query<ListedPhoneRow>(
    `SELECT entry_id, phone, reason, created_at FROM audience.listed_phones
     WHERE account_id = $1 AND list = $2 AND ($3::timestamptz IS NULL OR (created_at, entry_id) < ($3, $4))
     ORDER BY created_at DESC, entry_id DESC LIMIT $5`,
    [accountId, list, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}

const GROUP_COLUMNS = `g.group_id, g.name, g.created_at, g.updated_at,
  (SELECT count(*)::int FROM audience.group_members m JOIN contacts.contacts c ON c.contact_id = m.contact_id WHERE m.group_id = g.group_id) AS members`;

export async function contactGroup(db: Pool, accountId: string, groupId: string): Promise<ContactGroupRow | undefined> {
  const { rows } = await db.query<ContactGroupRow>(`SELECT ${GROUP_COLUMNS} FROM audience.contact_groups g WHERE g.account_id = $1 AND g.group_id = $2`, [accountId, groupId]);
  return rows[0];
}

export async function contactGroups(db: Pool, accountId: string, page: Page): Promise<ContactGroupRow[]> {
  const { rows } = await db.query<ContactGroupRow>(
    `SELECT ${GROUP_COLUMNS} FROM audience.contact_groups g
     WHERE g.account_id = $1 AND ($2::timestamptz IS NULL OR (g.created_at, g.group_id) < ($2, $3))
     ORDER BY g.created_at DESC, g.group_id DESC LIMIT $4`,
    [accountId, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}

/** Members of a group that are contacts of the account, most recently added first. */
export async function groupMembers(db: Pool, accountId: string, groupId: string, page: Page): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(
    `SELECT c.contact_id, c.phone, c.name, c.tags, c.opted_out, m.added_at
     FROM audience.group_members m JOIN contacts.contacts c ON c.contact_id = m.contact_id AND c.account_id = m.account_id
     WHERE m.account_id = $1 AND m.group_id = $2 AND ($3::timestamptz IS NULL OR (m.added_at, m.contact_id) < ($3, $4))
     ORDER BY m.added_at DESC, m.contact_id DESC LIMIT $5`,
    [accountId, groupId, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}

/** The contact ids of the group among `contactIds` (all of them when none is given). */
export async function memberIds(db: Pool, accountId: string, groupId: string, contactIds?: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ contact_id: string }>(
    `SELECT contact_id FROM audience.group_members WHERE account_id = $1 AND group_id = $2 AND ($3::text[] IS NULL OR contact_id = ANY($3::text[]))`,
    [accountId, groupId, contactIds ?? null],
  );
  return rows.map((row) => row.contact_id);
}
