import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Pool } from 'pg';
import { gatewayError } from './errors.js';

/** Spec 8.4. */
export const CODE_TTL_MS = 10 * 60_000;
const SENDS_PER_HOUR = 5;
const WRONG_PER_EMAIL_PER_HOUR = 10;
const WRONG_PER_CODE = 5;
const RESEND_AFTER_MS = 60_000;
const HOUR_MS = 3_600_000;

export const emailCodesDdl = [
  // One live code per connection: the e-mail it went to and the account it proves.
  `CREATE TABLE IF NOT EXISTS api.email_codes (
    connection_id text PRIMARY KEY,
    email text NOT NULL,
    account_id text NOT NULL,
    code_hash text NOT NULL,
    expires_at timestamptz NOT NULL,
    sent_at timestamptz NOT NULL,
    wrong_attempts integer NOT NULL DEFAULT 0
  )`,
  // Sends and wrong attempts per target e-mail, for the hourly ceilings.
  `CREATE TABLE IF NOT EXISTS api.email_code_events (
    email text NOT NULL,
    kind text NOT NULL,
    at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS email_code_events_by_email ON api.email_code_events (email, kind, at)`,
  // Counted per surface: codes typed in a partner's component never lock the e-mail out of the panels.
  `ALTER TABLE api.email_code_events ADD COLUMN IF NOT EXISTS surface text NOT NULL DEFAULT 'connect'`,
];

/** Where codes are typed: each surface has its own ceilings for an e-mail. */
export type CodeSurface = 'connect' | 'panel';

export interface PendingCode {
  readonly email: string;
  readonly accountId: string;
  readonly sentAt: number;
  readonly expiresAt: number;
  /** Wrong attempts the code still takes; 0: it is used up, and only a new code goes on. */
  readonly attemptsLeft: number;
}

/**
 * Six-digit e-mail codes (spec 4.5, 8.4), one live code per challenge (a connection of the
 * component, a sign-in to the panels), kept only as an HMAC under a key of the gateway (a
 * plain hash of six digits would be reversed in a moment), compared in constant time, with every
 * ceiling counted per target e-mail and surface over the last hour on the given clock: anyone with
 * a component session can type codes for any e-mail, and must not lock its owner out of the panels.
 */
export class EmailCodes {
  constructor(
    private readonly pool: Pool,
    private readonly key: string,
    private readonly surface: CodeSurface,
  ) {}

  /** The code waiting for confirmation on a connection, if any (expired and used-up ones included until replaced). */
  async pending(challengeId: string): Promise<PendingCode | undefined> {
    const { rows } = await this.pool.query<{ email: string; account_id: string; sent_at: Date; expires_at: Date; wrong_attempts: number }>(
      'SELECT email, account_id, sent_at, expires_at, wrong_attempts FROM api.email_codes WHERE connection_id = $1',
      [challengeId],
    );
    const row = rows[0];
    return (
      row && {
        email: row.email,
        accountId: row.account_id,
        sentAt: row.sent_at.getTime(),
        expiresAt: row.expires_at.getTime(),
        attemptsLeft: Math.max(0, WRONG_PER_CODE - row.wrong_attempts),
      }
    );
  }

  /**
   * A new code for `email` on this connection, replacing any earlier one: 429
   * `code_sends_exceeded` at the 6th send to the e-mail within an hour, 429 `rate_limited` within a
   * minute of the last send on the connection. Returns the code, for the e-mail only.
   */
  async issue(challengeId: string, target: { email: string; accountId: string }, now: number): Promise<string> {
    const email = target.email.toLowerCase();
    const previous = await this.pending(challengeId);
    if (previous !== undefined && now - previous.sentAt < RESEND_AFTER_MS) {
      const wait = Math.ceil((RESEND_AFTER_MS - (now - previous.sentAt)) / 1000);
      throw gatewayError('rate_limited', {}, { headers: { 'Retry-After': String(wait) } });
    }
    if ((await this.count(email, 'sent', now)) >= SENDS_PER_HOUR) throw gatewayError('code_sends_exceeded');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await this.pool.query(
      `INSERT INTO api.email_codes (connection_id, email, account_id, code_hash, expires_at, sent_at, wrong_attempts)
       VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0), 0)
       ON CONFLICT (connection_id) DO UPDATE SET email = EXCLUDED.email, account_id = EXCLUDED.account_id, code_hash = EXCLUDED.code_hash,
         expires_at = EXCLUDED.expires_at, sent_at = EXCLUDED.sent_at, wrong_attempts = 0`,
      [challengeId, email, target.accountId, this.hash(challengeId, code), now + CODE_TTL_MS, now],
    );
    await this.record(email, 'sent', now);
    return code;
  }

  /**
   * Confirms a code: the account it proves, once. 429 `code_attempts_exceeded` once the e-mail had
   * 10 wrong attempts within the hour; 400 `invalid_code` for a wrong or expired code; the 5th wrong
   * attempt on the connection uses the code up: it is kept, refusing even the right digits, so the
   * step can say so and a resend (within the e-mail's limits) gives a new one.
   */
  async confirm(challengeId: string, code: string, now: number): Promise<{ accountId: string; email: string }> {
    const { rows } = await this.pool.query<{ email: string; account_id: string; code_hash: string; expires_at: Date; wrong_attempts: number }>(
      'SELECT email, account_id, code_hash, expires_at, wrong_attempts FROM api.email_codes WHERE connection_id = $1',
      [challengeId],
    );
    const row = rows[0];
    if (row === undefined) throw gatewayError('invalid_code');
    if ((await this.count(row.email, 'wrong', now)) >= WRONG_PER_EMAIL_PER_HOUR) throw gatewayError('code_attempts_exceeded');
    if (row.expires_at.getTime() <= now || row.wrong_attempts >= WRONG_PER_CODE) throw gatewayError('invalid_code');
    const expected = Buffer.from(row.code_hash, 'hex');
    const given = Buffer.from(this.hash(challengeId, code), 'hex');
    if (timingSafeEqual(expected, given)) {
      await this.pool.query('DELETE FROM api.email_codes WHERE connection_id = $1', [challengeId]);
      return { accountId: row.account_id, email: row.email };
    }
    await this.record(row.email, 'wrong', now);
    await this.pool.query('UPDATE api.email_codes SET wrong_attempts = wrong_attempts + 1 WHERE connection_id = $1', [challengeId]);
    throw gatewayError('invalid_code');
  }

  /** Leaves the code step: the code dies. */
  async cancel(challengeId: string): Promise<void> {
    await this.pool.query('DELETE FROM api.email_codes WHERE connection_id = $1', [challengeId]);
  }

  private hash(challengeId: string, code: string): string {
    return createHmac('sha256', this.key).update(`${challengeId}\u0000${code}`).digest('hex');
  }

  private async count(email: string, kind: 'sent' | 'wrong', now: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM api.email_code_events WHERE email = $1 AND kind = $2 AND surface = $4 AND at > to_timestamp($3 / 1000.0)`,
      [email, kind, now - HOUR_MS, this.surface],
    );
    return Number(rows[0]?.n ?? 0);
  }

  private async record(email: string, kind: 'sent' | 'wrong', now: number): Promise<void> {
    await this.pool.query(`INSERT INTO api.email_code_events (email, kind, at, surface) VALUES ($1, $2, to_timestamp($3 / 1000.0), $4)`, [email, kind, now, this.surface]);
    await this.pool.query(`DELETE FROM api.email_code_events WHERE at < to_timestamp($1 / 1000.0) - interval '1 day'`, [now]);
  }
}
