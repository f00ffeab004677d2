import { contactId } from '../../processors/contacts/index.js';
import { normalizePhone } from '../../schemas/phones.js';
import { textProblem } from '../storable-text.js';

/** A contact's own values, as `ContactEvent` records carry them. */
export interface ContactValues {
  readonly id: string;
  readonly phone: string;
  readonly name: string | null;
  readonly tags: readonly string[];
}

export interface ImportRow {
  readonly phone: string;
  readonly name?: string;
  readonly tags?: readonly string[];
}

export interface ImportPlan {
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly invalidRows: { index: number; phone: string; reason: 'invalid_phone' | 'invalid_text' }[];
  /** The new values of every created or changed contact, in row order. */
  readonly upserts: ContactValues[];
}

/**
 * What an import does, row by row against the contacts there (`existing`, by phone): a row
 * creates the contact of its phone or replaces the fields it gives (an empty name clears it).
 * A phone repeated in the import is applied again over its previous row.
 */
export function planImport(accountId: string, rows: readonly ImportRow[], existing: ReadonlyMap<string, ContactValues>): ImportPlan {
  const current = new Map(existing);
  const plan = { created: 0, updated: 0, unchanged: 0, invalidRows: [] as ImportPlan['invalidRows'], upserts: [] as ContactValues[] };
  rows.forEach((row, index) => {
    if ([row.phone, row.name ?? '', ...(row.tags ?? [])].some((text) => textProblem(text) !== undefined)) {
      // The phone is echoed back: without the characters that make the row invalid.
      plan.invalidRows.push({ index, phone: storableEcho(row.phone), reason: 'invalid_text' });
      return;
    }
    const phone = normalizePhone(row.phone);
    if (phone === undefined) {
      plan.invalidRows.push({ index, phone: row.phone, reason: 'invalid_phone' });
      return;
    }
    const before = current.get(phone);
    const after: ContactValues = {
      id: before?.id ?? contactId(accountId, phone),
      phone,
      name: row.name === undefined ? (before?.name ?? null) : row.name.trim() || null,
      tags: row.tags === undefined ? (before?.tags ?? []) : normalizeTags(row.tags),
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
  return a.name === b.name && a.tags.length === b.tags.length && a.tags.every((tag, i) => tag === b.tags[i]);
}
