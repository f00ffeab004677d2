import type { Pool } from 'pg';
import type { Static } from '@sinclair/typebox';
import { auditEntries } from '../../processors/audit/index.js';
import { decodeCursor, paginate } from '../conversations/cursor.js';
import { auditEntryOut, type AuditQuery } from './schemas.js';

/** A page of the audit log of an account, or of the platform (null). */
export async function auditPage(pool: Pool, accountId: string | null, query: Static<typeof AuditQuery>) {
  const rows = await auditEntries(pool, accountId, { limit: query.limit + 1, action: query.action, after: query.cursor === undefined ? undefined : decodeCursor(query.cursor) });
  const page = paginate(rows, query.limit, (row) => ({ at: row.occurred_at, id: row.entry_id }));
  return { data: page.items.map(auditEntryOut), next_cursor: page.next_cursor };
}
