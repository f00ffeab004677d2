import type { Pool } from 'pg';

export interface AuditRow {
  readonly entry_id: string;
  readonly account_id: string | null;
  readonly action: string;
  readonly target_id: string;
  readonly actor_kind: string;
  readonly actor_id: string;
  readonly ip: string;
  readonly user_agent: string | null;
  readonly occurred_at: Date;
}

/** A page of an account's entries (null: the platform's own), newest first; `after` is the last row of the previous page. */
export async function auditEntries(
  db: Pool,
  accountId: string | null,
  page: { readonly limit: number; readonly action?: string; readonly after?: { readonly at: Date; readonly id: string } },
): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditRow>(
    `SELECT entry_id, account_id, action, target_id, actor_kind, actor_id, ip, user_agent, occurred_at FROM audit.entries
     WHERE ${accountId === null ? '$1::text IS NULL AND account_id IS NULL' : 'account_id = $1'} AND ($2::text IS NULL OR action = $2)
       AND ($3::timestamptz IS NULL OR (occurred_at, entry_id) < ($3, $4))
     ORDER BY occurred_at DESC, entry_id DESC LIMIT $5`,
    [accountId, page.action ?? null, page.after?.at ?? null, page.after?.id ?? null, page.limit],
  );
  return rows;
}
