import type { Pool } from 'pg';
import type { CallStatus } from '../../schemas/records.js';

export interface CallRow {
  readonly instance_id: string;
  readonly call_id: string;
  readonly caller_jid: string;
  readonly caller_lid: string | null;
  readonly caller_phone: string | null;
  readonly is_video: boolean;
  readonly group_jid: string | null;
  readonly status: CallStatus;
  readonly offline: boolean;
  readonly rejected_by_us: boolean;
  readonly started_at: Date;
  readonly updated_at: Date;
}

const COLUMNS = `instance_id, call_id, caller_jid, caller_lid, caller_phone, is_video, group_jid, status, offline, rejected_by_us, started_at, updated_at`;

/** A page of the project's calls, newest first; `after` is the (started_at, call_id) of the previous page's last. */
export async function listCalls(
  pool: Pool,
  projectId: string,
  filter: { readonly instanceId?: string },
  page: { readonly limit: number; readonly after?: { readonly at: Date; readonly id: string } },
): Promise<CallRow[]> {
  const { rows } = await pool.query<CallRow>(
    `SELECT ${COLUMNS} FROM calls.log
     WHERE project_id = $1 AND ($2::text IS NULL OR instance_id = $2)
       AND ($3::timestamptz IS NULL OR (started_at, call_id) < ($3, $4))
     ORDER BY started_at DESC, call_id DESC LIMIT $5`,
    [projectId, filter.instanceId ?? null, page.after?.at ?? null, page.after?.id ?? '', page.limit],
  );
  return rows;
}

/** One call of the project by its network id (a call id is the network's, unique per call). */
export async function callById(pool: Pool, projectId: string, callId: string): Promise<CallRow | undefined> {
  const { rows } = await pool.query<CallRow>(`SELECT ${COLUMNS} FROM calls.log WHERE project_id = $1 AND call_id = $2 ORDER BY started_at DESC LIMIT 1`, [projectId, callId]);
  return rows[0];
}
