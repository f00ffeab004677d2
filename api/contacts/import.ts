import { contactId } from '../../processors/contacts/index.js';
import type { ContactValues } from '../../processors/contacts/write.js';
import { parsePhone, type ParsedPhone, type PhoneProblem } from '../../schemas/phones.js';
import { textProblem } from '../storable-text.js';


export interface ImportRow {
  readonly phone: string;
  /** ISO 3166 alpha-2 of a phone written in national format; over the import's own. */
  readonly country?: string;
  readonly name?: string;
  readonly tags?: readonly string[];
  /** IANA zone; replaces the contact's, an empty string clears it. Checked before planning (`badTimeZone`). */
  readonly time_zone?: string;
}

export type InvalidRow =
  | { readonly index: number; readonly phone: string; readonly reason: 'invalid_phone'; readonly problem: PhoneProblem }
  | { readonly index: number; readonly phone: string; readonly reason: 'invalid_text' };

export interface ImportPlan {
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly invalidRows: InvalidRow[];
  /** The new values of every created or changed contact, in row order. */
  readonly upserts: ContactValues[];
}

/** A row's phone in E.164, read in the row's country, else in `country` (the import's, else the account's). */
export function rowPhone(row: ImportRow, country: string | null): ParsedPhone {
  return parsePhone(row.phone, row.country ?? country);
}

/**
 * What an import does, row by row against the contacts there (`existing`, by phone): a row
 * creates the contact of its phone (`phones[i]`, the `rowPhone` of `rows[i]`: read once, for the
 * lookup of `existing` too) or replaces the fields it gives (an empty name clears it). A phone
 * repeated in the import, however written, is applied again over its previous row.
 */
export function planImport(
  accountId: string,
  rows: readonly ImportRow[],
  phones: readonly ParsedPhone[],
  existing: ReadonlyMap<string, ContactValues>,
): ImportPlan {
  const current = new Map(existing);
  const plan = { created: 0, updated: 0, unchanged: 0, invalidRows: [] as InvalidRow[], upserts: [] as ContactValues[] };
  rows.forEach((row, index) => {
    if ([row.phone, row.name ?? '', ...(row.tags ?? [])].some((text) => textProblem(text) !== undefined)) {
      // The phone is echoed back: without the characters that make the row invalid.
      plan.invalidRows.push({ index, phone: storableEcho(row.phone), reason: 'invalid_text' });
      return;
    }
    const parsed = phones[index];
    if (parsed === undefined) throw new Error(`row ${index} has no phone read`);
    if (!parsed.ok) {
      plan.invalidRows.push({ index, phone: row.phone, reason: 'invalid_phone', problem: parsed.reason });
      return;
    }
    const phone = parsed.e164;
    const before = current.get(phone);
    const after: ContactValues = {
      id: before?.id ?? contactId(accountId, phone),
      phone,
      name: row.name === undefined ? (before?.name ?? null) : row.name.trim() || null,
      tags: row.tags === undefined ? (before?.tags ?? []) : normalizeTags(row.tags),
      time_zone: row.time_zone === undefined ? (before?.time_zone ?? null) : row.time_zone.trim() || null,
    };
    if (before === undefined) plan.created += 1;
    else if (sameValues(before, after)) {
      plan.unchanged += 1;
      return;
    } else plan.updated += 1;
    current.set(phone, after);
    plan.upserts.push(after);
  });
  return plan;
}

// eslint-disable-next-line no-control-regex -- replacing NUL is the point
const UNSTORABLE = /[\u0000\p{Cs}]/gu;

function storableEcho(text: string): string {
  return text.replace(UNSTORABLE, '\uFFFD');
}

function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim()).filter((tag) => tag !== ''))];
}

function sameValues(a: ContactValues, b: ContactValues): boolean {
  return a.name === b.name && a.time_zone === b.time_zone && a.tags.length === b.tags.length && a.tags.every((tag, i) => tag === b.tags[i]);
}
