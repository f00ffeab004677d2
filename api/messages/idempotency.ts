import { createHash, hash } from 'node:crypto';
import type { Pool } from 'pg';
import { gatewayError } from '../errors.js';

export const MAX_KEY_LENGTH = 255;
const PURGE_EVERY_MS = 60_000;

export type Claim =
  /** `messageId`: the id of the send made under this key in its current 24 hours. */
  | { readonly kind: 'claimed'; readonly messageId: string }
  | { readonly kind: 'replay'; readonly statusCode: number; readonly response: unknown };

/**
 * Send idempotency (spec 8.2) on the `api.idempotency_keys` table, per account for 24 hours. The
 * first request inserts the key `in_progress`; a concurrent one finds it and gets 409; a later one
 * with the same body gets the stored answer; with another body, 422. A key whose first request
 * failed is `released`, so it can be used again; one left `in_progress` by a crashed process is
 * taken over after a minute. The message id derives from the key and the start of its 24 hours: a
 * retry after a failure or a crash keeps the id (a 503 whose command the log took late included),
 * so the connector never sends it twice; a key used again after its 24 hours is a new send with an
 * id of its own (with the key's old id, the connector, which remembers executed sends for days,
 * took it for one already sent: answered 202, never sent).
 */
export class IdempotencyKeys {
  private purgedAt = 0;

  constructor(private readonly pool: Pool) {}

  /** Keys past their 24 hours serve nothing (a claim renews them): deleted, at most once a minute per process. */
  private purgeExpired(): void {
    const now = Date.now();
    if (now - this.purgedAt < PURGE_EVERY_MS) return;
    this.purgedAt = now;
    // Not awaited, and tried again on the next claim when it failed: the table only grows meanwhile.
    this.pool.query(`DELETE FROM api.idempotency_keys WHERE created_at < now() - interval '24 hours'`).catch(() => (this.purgedAt = 0));
  }

  static validate(key: string | undefined): string | undefined {
    if (key === undefined) return undefined;
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw gatewayError('idempotency_key_invalid');
    return key;
  }

  static requestHash(route: string, body: unknown): string {
    return createHash('sha256').update(route).update('\n').update(canonicalJson(body)).digest('hex');
  }

  async claim(accountId: string, key: string, requestHash: string): Promise<Claim> {
    this.purgeExpired();
    const { rows: claimed } = await this.pool.query<{ window_started_at: Date | null }>(
      `INSERT INTO api.idempotency_keys AS k (account_id, key, request_hash, state, window_started_at) VALUES ($1, $2, $3, 'in_progress', now())
       ON CONFLICT (account_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'in_progress',
         status_code = NULL, response = NULL, created_at = now(),
         window_started_at = CASE WHEN k.created_at < now() - interval '24 hours' THEN now() ELSE k.window_started_at END
       WHERE k.created_at < now() - interval '24 hours' OR k.state = 'released' OR (k.state = 'in_progress' AND k.created_at < now() - interval '1 minute')
       RETURNING window_started_at`,
      [accountId, key, requestHash],
    );
    const [won] = claimed;
    if (won) return { kind: 'claimed', messageId: idempotentMessageId(accountId, key, won.window_started_at) };
    const { rows } = await this.pool.query<{ request_hash: string; state: string; status_code: number | null; response: unknown }>(
      'SELECT request_hash, state, status_code, response FROM api.idempotency_keys WHERE account_id = $1 AND key = $2',
      [accountId, key],
    );
    const row = rows[0];
    // Released or purged in between: the key is free again.
    if (!row || row.state === 'released') return this.claim(accountId, key, requestHash);
    if (row.request_hash !== requestHash) throw gatewayError('idempotency_key_reused');
    if (row.state !== 'done' || row.status_code === null) throw gatewayError('idempotency_in_progress');
    return { kind: 'replay', statusCode: row.status_code, response: row.response };
  }

  async complete(accountId: string, key: string, statusCode: number, response: unknown): Promise<void> {
    await this.pool.query(
      `UPDATE api.idempotency_keys SET state = 'done', status_code = $3, response = $4 WHERE account_id = $1 AND key = $2`,
      [accountId, key, statusCode, JSON.stringify(response)],
    );
  }

  async release(accountId: string, key: string): Promise<void> {
    // Kept, with its window: a retry of the key gets the same message id.
    await this.pool.query(`UPDATE api.idempotency_keys SET state = 'released' WHERE account_id = $1 AND key = $2 AND state = 'in_progress'`, [accountId, key]);
  }
}

/** JSON with object keys sorted, so the same body in another key order hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The message id of an idempotent send: the same for every retry of the key within its 24 hours.
 * A key claimed before its window was recorded (`null`) keeps the id it was given then.
 */
function idempotentMessageId(accountId: string, key: string, windowStartedAt: Date | null): string {
  const source = windowStartedAt === null ? `${accountId}\n${key}` : `${accountId}\n${key}\n${windowStartedAt.getTime()}`;
  const digest = hash('sha256', source, 'base64url').replace(/[-_]/g, '').slice(0, 24);
  return `msg_${digest.toLowerCase()}`;
}
