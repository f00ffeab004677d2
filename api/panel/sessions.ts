import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Pool } from 'pg';
import { hashSecret, secretToken } from '../../shared/secret-token.js';

/** A panel sign-in lasts a working day. */
export const PANEL_SESSION_TTL_MS = 12 * 3_600_000;
export const PANEL_COOKIE = 'gw_panel';

export const panelSessionsDdl = [
  `CREATE TABLE IF NOT EXISTS api.panel_sessions (
    token_hash text PRIMARY KEY,
    email text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS panel_sessions_by_expiry ON api.panel_sessions (expires_at)`,
];

export interface PanelSession {
  readonly tokenHash: string;
  readonly email: string;
  readonly expiresAt: number;
}

/**
 * Sign-ins to the panels: a session token in an HttpOnly cookie, kept only as its hash, and a
 * CSRF token derived from it (an HMAC under a key of the gateway), which the panel's page sends
 * back in `X-CSRF-Token` on every write. A page of another site can neither send the cookie
 * (SameSite=Strict) nor learn the CSRF token.
 */
export class PanelSessions {
  constructor(
    private readonly pool: Pool,
    private readonly csrfKey: string,
  ) {}

  async open(email: string, now: number): Promise<{ token: string; session: PanelSession }> {
    const token = secretToken('ps_');
    const session = { tokenHash: hashSecret(token), email, expiresAt: now + PANEL_SESSION_TTL_MS };
    await this.pool.query(
      `INSERT INTO api.panel_sessions (token_hash, email, created_at, expires_at) VALUES ($1, $2, to_timestamp($3 / 1000.0), to_timestamp($4 / 1000.0))`,
      [session.tokenHash, email, now, session.expiresAt],
    );
    await this.pool.query(`DELETE FROM api.panel_sessions WHERE expires_at < to_timestamp($1 / 1000.0)`, [now]);
    return { token, session };
  }

  /** The live session of a cookie's token, if any. */
  async find(token: string, now: number): Promise<PanelSession | undefined> {
    if (!/^ps_[A-Za-z0-9]{32}$/.test(token)) return undefined;
    const { rows } = await this.pool.query<{ token_hash: string; email: string; expires_at: Date }>(
      `SELECT token_hash, email, expires_at FROM api.panel_sessions WHERE token_hash = $1 AND expires_at > to_timestamp($2 / 1000.0)`,
      [hashSecret(token), now],
    );
    const row = rows[0];
    return row && { tokenHash: row.token_hash, email: row.email, expiresAt: row.expires_at.getTime() };
  }

  async close(session: PanelSession): Promise<void> {
    await this.pool.query(`DELETE FROM api.panel_sessions WHERE token_hash = $1`, [session.tokenHash]);
  }

  csrfToken(session: PanelSession): string {
    return createHmac('sha256', this.csrfKey).update(session.tokenHash).digest('base64url');
  }

  csrfMatches(session: PanelSession, given: string | undefined): boolean {
    if (given === undefined) return false;
    const expected = Buffer.from(this.csrfToken(session));
    const sent = Buffer.from(given);
    return expected.length === sent.length && timingSafeEqual(expected, sent);
  }
}
