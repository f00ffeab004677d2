import type { Pool } from 'pg';
import type { ConnectionId, PartnerId } from '../../schemas/ids.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';

/** Spec 8.4: a connect code lives 10 minutes and is used once. */
export const CONNECT_CODE_TTL_MS = 10 * 60_000;

export const connectCodesDdl = [
  `CREATE TABLE IF NOT EXISTS api.connect_codes (
    code_hash text PRIMARY KEY,
    connection_id text NOT NULL,
    partner_id text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`,
  `CREATE INDEX IF NOT EXISTS connect_codes_by_expiry ON api.connect_codes (expires_at)`,
];

/** A one-time code (`cc_…`) the component hands to the partner on completion; kept as its hash. */
export async function issueConnectCode(
  pool: Pool,
  owner: { connectionId: ConnectionId; partnerId: PartnerId },
  now: number,
): Promise<{ code: string; expiresAt: number }> {
  const code = secretToken('cc_');
  const expiresAt = now + CONNECT_CODE_TTL_MS;
  await pool.query(
    `INSERT INTO api.connect_codes (code_hash, connection_id, partner_id, expires_at) VALUES ($1, $2, $3, to_timestamp($4 / 1000.0))`,
    [hashSecret(code), owner.connectionId, owner.partnerId, expiresAt],
  );
  await pool.query(`DELETE FROM api.connect_codes WHERE expires_at < to_timestamp($1 / 1000.0) - interval '1 day'`, [now]);
  return { code, expiresAt };
}

/**
 * Uses a code once, for the partner that owns it: the connection it was issued for, or none when
 * the code is wrong, expired, used or another partner's (spec 4.4 rule 4: one answer for all four).
 */
export async function redeemConnectCode(pool: Pool, code: string, partnerId: PartnerId, now: number): Promise<ConnectionId | undefined> {
  const { rows } = await pool.query<{ connection_id: string }>(
    `UPDATE api.connect_codes SET used_at = to_timestamp($3 / 1000.0)
      WHERE code_hash = $1 AND partner_id = $2 AND used_at IS NULL AND expires_at > to_timestamp($3 / 1000.0)
      RETURNING connection_id`,
    [hashSecret(code), partnerId, now],
  );
  return rows[0]?.connection_id as ConnectionId | undefined;
}
