import type { Pool } from 'pg';

/** A row of `contacts.contacts`, as the API reads it. */
export interface ContactRow {
  readonly contact_id: string;
  readonly account_id: string;
  readonly phone: string;
  readonly name: string | null;
  readonly tags: string[];
  readonly time_zone: string | null;
  readonly opted_out: boolean;
  readonly opted_out_at: Date | null;
  readonly opt_out_source: string | null;
  readonly created_at: Date;
  readonly updated_at: Date;
}

/** The list filters of `GET /contacts` and `GET /contacts/export`. */
export interface ContactFilter {
  /** Contacts carrying this tag. */
  readonly tag?: string;
  readonly optedOut?: boolean;
  /** Part of the name or phone, case-insensitive. */
  readonly q?: string;
}

/** One page, newest first; `after` is the (created_at, contact_id) of the last row of the previous page. */
export interface ContactPage {
  readonly limit: number;
  readonly after?: { readonly at: Date; readonly id: string };
}

const COLUMNS = 'contact_id, account_id, phone, name, tags, time_zone, opted_out, opted_out_at, opt_out_source, created_at, updated_at';

/** Whether the account's contact with this E.164 phone opted out (sends to it are refused). */
export async function optedOut(db: Pool, accountId: string, phone: string): Promise<boolean> {
  const { rows } = await db.query<{ opted_out: boolean }>(
    'SELECT opted_out FROM contacts.contacts WHERE account_id = $1 AND phone = $2',
    [accountId, phone],
  );
  return rows[0]?.opted_out ?? false;
}

export async function contactById(db: Pool, accountId: string, contactId: string): Promise<ContactRow | undefined> {
  const { rows } = await db.query<ContactRow>(
    `SELECT ${COLUMNS} FROM contacts.contacts WHERE account_id = $1 AND contact_id = $2`,
    [accountId, contactId],
  );
  return rows[0];
}

export async function contactsByPhone(db: Pool, accountId: string, phones: readonly string[]): Promise<ContactRow[]> {
  const { rows } = await db.query<ContactRow>(
    `SELECT ${COLUMNS} FROM contacts.contacts WHERE account_id = $1 AND phone = ANY($2::text[])`,
    [accountId, phones],
  );
  return rows;
}

export async function listContacts(db: Pool, accountId: string, filter: ContactFilter, page: ContactPage): Promise<ContactRow[]> {
  const { rows } = await db.query<ContactRow>(
    `SELECT ${COLUMNS} FROM contacts.contacts
     WHERE account_id = $1
       AND ($2::text IS NULL OR tags @> ARRAY[$2::text])
       AND ($3::boolean IS NULL OR opted_out = $3)
       AND ($4::text IS NULL OR name ILIKE $4 OR phone LIKE $4)
       AND ($5::timestamptz IS NULL OR (created_at, contact_id) < ($5, $6))
     ORDER BY created_at DESC, contact_id DESC
     LIMIT $7`,
    [
      accountId,
      filter.tag ?? null,
      filter.optedOut ?? null,
      filter.q === undefined ? null : `%${filter.q.replace(/[\\%_]/g, '\\$&')}%`,
      page.after?.at ?? null,
      page.after?.id ?? null,
      page.limit,
    ],
  );
  return rows;
}

/** The account's tags, by name, with how many contacts carry each. */
export async function tagCounts(db: Pool, accountId: string): Promise<{ name: string; contacts: number }[]> {
  const { rows } = await db.query<{ name: string; contacts: number }>(
    `SELECT tag AS name, count(*)::int AS contacts FROM contacts.contacts, unnest(tags) AS tag
     WHERE account_id = $1 GROUP BY tag ORDER BY tag`,
    [accountId],
  );
  return rows;
}

/** Those of `contactIds` that are contacts of the account. */
export async function knownContactIds(db: Pool, accountId: string, contactIds: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ contact_id: string }>(
    'SELECT contact_id FROM contacts.contacts WHERE account_id = $1 AND contact_id = ANY($2::text[])',
    [accountId, contactIds],
  );
  return rows.map((row) => row.contact_id);
}
