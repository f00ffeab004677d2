import type { Pool } from 'pg';
import type { ConnectionStatus, Customer, RevokedBy } from '../../schemas/records.js';

export interface ConnectionRow {
  readonly connection_id: string;
  readonly partner_id: string;
  readonly external_id: string;
  readonly status: ConnectionStatus;
  readonly account_id: string | null;
  readonly project_id: string | null;
  readonly customer: Customer;
  readonly revoked_by: RevokedBy | null;
  readonly created_at: Date;
  readonly activated_at: Date | null;
  readonly suspended_at: Date | null;
  readonly revoked_at: Date | null;
}

export interface ConnectionFilter {
  readonly partnerId?: string;
  readonly accountId?: string;
  readonly externalId?: string;
  readonly status?: string;
}

const COLUMNS = `connection_id, partner_id, external_id, status, account_id, project_id, customer, revoked_by,
  created_at, activated_at, suspended_at, revoked_at`;

/** Connections matching every filter given, newest first (at most 1000). */
export async function listConnections(pool: Pool, filter: ConnectionFilter): Promise<ConnectionRow[]> {
  const { rows } = await pool.query<ConnectionRow>(
    `SELECT ${COLUMNS} FROM connections.connections
      WHERE ($1::text IS NULL OR partner_id = $1) AND ($2::text IS NULL OR account_id = $2)
        AND ($3::text IS NULL OR external_id = $3) AND ($4::text IS NULL OR status = $4)
      ORDER BY created_at DESC, connection_id LIMIT 1000`,
    [filter.partnerId ?? null, filter.accountId ?? null, filter.externalId ?? null, filter.status ?? null],
  );
  return rows;
}
