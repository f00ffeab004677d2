import type { Pool } from 'pg';
import type { ConnectionId, PartnerId } from '../../schemas/ids.js';
import { newId } from '../../schemas/ids.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';

/** Spec 8.4: a session token lives 30 minutes. */
export const SESSION_TTL_MS = 30 * 60_000;

export interface ConnectSession {
  /** `csn_…`: names the session in support and in the component's events; not a credential. */
  readonly sessionId: string;
  readonly connectionId: ConnectionId;
  readonly partnerId: PartnerId;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export const sessionsDdl = [
  `CREATE TABLE IF NOT EXISTS api.connect_sessions (
    token_hash text PRIMARY KEY,
    connection_id text NOT NULL,
    partner_id text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS connect_sessions_by_expiry ON api.connect_sessions (expires_at)`,
  `ALTER TABLE api.connect_sessions ADD COLUMN IF NOT EXISTS session_id text`,
  // Sessions opened before sessions had ids are named by their hash, which reveals nothing of the token.
  `UPDATE api.connect_sessions SET session_id = 'csn_' || left(token_hash, 16) WHERE session_id IS NULL`,
];

/** A new session token (`cs_…`) for the component; shown once, kept as its hash. */
export async function issueSession(
  pool: Pool,
  owner: { connectionId: ConnectionId; partnerId: PartnerId },
  now: number,
): Promise<{ token: string; sessionId: string; expiresAt: number }> {
  const token = secretToken('cs_');
  const sessionId = newId('csn');
  const expiresAt = now + SESSION_TTL_MS;
  await pool.query(
    `INSERT INTO api.connect_sessions (token_hash, session_id, connection_id, partner_id, created_at, expires_at)
     VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0))`,
    [hashSecret(token), sessionId, owner.connectionId, owner.partnerId, now, expiresAt],
  );
  // Expired sessions are only kept a day, for the answer `connect_session_expired` instead of `invalid_connect_session`.
  await pool.query(`DELETE FROM api.connect_sessions WHERE expires_at < to_timestamp($1 / 1000.0) - interval '1 day'`, [now]);
  return { token, sessionId, expiresAt };
}

/** The session a token opens, expired or not (the caller tells the two apart); none for an unknown token. */
export async function findSession(pool: Pool, token: string): Promise<ConnectSession | undefined> {
  const { rows } = await pool.query<{ session_id: string; connection_id: string; partner_id: string; created_at: Date; expires_at: Date }>(
    `SELECT session_id, connection_id, partner_id, created_at, expires_at FROM api.connect_sessions WHERE token_hash = $1`,
    [hashSecret(token)],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    sessionId: row.session_id,
    connectionId: row.connection_id as ConnectionId,
    partnerId: row.partner_id as PartnerId,
    createdAt: row.created_at.getTime(),
    expiresAt: row.expires_at.getTime(),
  };
}
