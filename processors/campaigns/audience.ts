import type { Pool } from 'pg';
import type { CampaignRecipient } from '../../schemas/records.js';
import { parsePhone, phoneJid, type PhoneProblem } from '../../schemas/phones.js';
import { CsvError, parse } from 'csv-parse/sync';
import { CampaignRefused } from './refused.js';

/** A row of an explicit audience list (or of an uploaded CSV). */
export interface ListedRecipient {
  readonly to: string;
  readonly country?: string;
  readonly time_zone?: string;
  readonly variables?: Readonly<Record<string, string>>;
}

/** Who a campaign goes to: contacts with a tag, a contact group, a list, or a CSV with a `phone` column. */
export type Audience =
  | { readonly tag: string }
  | { readonly group_id: string }
  | { readonly list: readonly ListedRecipient[] }
  | { readonly csv: string };

export type InvalidRecipient =
  | { readonly index: number; readonly phone: string; readonly reason: 'invalid_phone'; readonly problem: PhoneProblem }
  | { readonly index: number; readonly phone: string; readonly reason: 'invalid_time_zone' | 'duplicate' };

export interface ResolvedAudience {
  readonly recipients: CampaignRecipient[];
  readonly invalid: InvalidRecipient[];
}

/** Recipients of one campaign at most. */
export const MAX_RECIPIENTS = 100_000;

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The recipients of an audience, now: each phone validated against its country's numbering plan
 * (the row's country, else the account's), each phone once (the first row wins; later ones are
 * reported `duplicate`). Contacts carry their name as the `name` variable and their time zone
 * (the campaign's when they have none).
 */
export async function resolveAudience(db: Pool, accountId: string, country: string | null, audience: Audience): Promise<ResolvedAudience> {
  if ('tag' in audience) return fromContacts(await db.query<ContactAudienceRow>(`${CONTACTS} AND $2 = ANY(c.tags) ORDER BY c.created_at, c.contact_id`, [accountId, audience.tag]));
  if ('group_id' in audience) {
    const { rowCount } = await db.query('SELECT 1 FROM audience.contact_groups WHERE account_id = $1 AND group_id = $2', [accountId, audience.group_id]);
    if (rowCount === 0) throw new CampaignRefused('not_found');
    return fromContacts(
      await db.query<ContactAudienceRow>(
        `${CONTACTS} AND c.contact_id IN (SELECT contact_id FROM audience.group_members WHERE group_id = $2) ORDER BY c.created_at, c.contact_id`,
        [accountId, audience.group_id],
      ),
    );
  }
  const rows = 'list' in audience ? audience.list : csvRows(audience.csv);
  if (rows.length > MAX_RECIPIENTS) throw new CampaignRefused('invalid_request', { detail: `an audience holds ${MAX_RECIPIENTS} recipients at most` });
  const recipients: CampaignRecipient[] = [];
  const invalid: InvalidRecipient[] = [];
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    const parsed = parsePhone(row.to, row.country ?? country);
    if (!parsed.ok) return void invalid.push({ index, phone: row.to, reason: 'invalid_phone', problem: parsed.reason });
    if (row.time_zone !== undefined && !isTimeZone(row.time_zone)) return void invalid.push({ index, phone: row.to, reason: 'invalid_time_zone' });
    if (seen.has(parsed.e164)) return void invalid.push({ index, phone: row.to, reason: 'duplicate' });
    seen.add(parsed.e164);
    recipients.push({ to: phoneJid(parsed.e164), phone: parsed.e164, contact_id: null, time_zone: row.time_zone ?? null, variables: { phone: parsed.e164, ...row.variables } });
  });
  return { recipients, invalid };
}

interface ContactAudienceRow {
  contact_id: string;
  phone: string;
  name: string | null;
  time_zone: string | null;
}

const CONTACTS = 'SELECT c.contact_id, c.phone, c.name, c.time_zone FROM contacts.contacts c WHERE c.account_id = $1';

function fromContacts({ rows }: { rows: ContactAudienceRow[] }): ResolvedAudience {
  if (rows.length > MAX_RECIPIENTS) throw new CampaignRefused('invalid_request', { detail: `an audience holds ${MAX_RECIPIENTS} recipients at most` });
  return {
    recipients: rows.map((c) => ({ to: phoneJid(c.phone), phone: c.phone, contact_id: c.contact_id, time_zone: c.time_zone, variables: { name: c.name ?? '', phone: c.phone } })),
    invalid: [],
  };
}

/** The rows of an RFC 4180 text (a spreadsheet's export: a byte-order mark, CRLF, short rows). */
function csvCells(text: string): string[][] {
  try {
    return parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true });
  } catch (err) {
    if (err instanceof CsvError) throw new CampaignRefused('invalid_request', { detail: `the CSV cannot be read: ${err.message}` });
    throw err;
  }
}

/** A CSV audience: a header naming `phone` (or `to`), optional `country` and `time_zone`; every other column is a variable. */
function csvRows(text: string): ListedRecipient[] {
  const [header, ...lines] = csvCells(text);
  const names = (header ?? []).map((name) => name.trim());
  const phoneAt = names.findIndex((name) => name === 'phone' || name === 'to');
  if (phoneAt < 0) throw new CampaignRefused('invalid_request', { detail: 'the CSV header names no phone column' });
  return lines
    .filter((cells) => cells.some((cell) => cell.trim() !== ''))
    .map((cells) => {
      const variables: Record<string, string> = {};
      let country: string | undefined;
      let zone: string | undefined;
      names.forEach((name, i) => {
        const value = cells[i] ?? '';
        if (i === phoneAt) return;
        if (name === 'country') country = value.trim() || undefined;
        else if (name === 'time_zone') zone = value.trim() || undefined;
        else variables[name] = value;
      });
      return { to: cells[phoneAt] ?? '', country, time_zone: zone, variables };
    });
}
