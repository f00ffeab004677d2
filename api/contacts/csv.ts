import type { ContactRow } from '../../processors/contacts/index.js';

export const CSV_HEADER = 'id,phone,name,tags,opted_out,opted_out_at,opt_out_source,created_at,updated_at\r\n';

/**
 * One field of RFC 4180. Free text that a spreadsheet would run as a formula (starting with =, +,
 * -, @ or a control character) is prefixed with an apostrophe; phones are E.164 and left as they are.
 */
function field(value: string, freeText = true): string {
  const safe = freeText && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** A contact as a CSV line (tags joined by `;`). */
export function csvLine(row: ContactRow): string {
  return [
    row.contact_id,
    field(row.phone, false),
    field(row.name ?? ''),
    field(row.tags.join(';')),
    String(row.opted_out),
    row.opted_out_at?.toISOString() ?? '',
    field(row.opt_out_source ?? ''),
    row.created_at.toISOString(),
    row.updated_at.toISOString(),
  ].join(',') + '\r\n';
}
