import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { gatewayError } from '../errors.js';

export const MAX_KEY_LENGTH = 255;

export type Claim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'replay'; readonly statusCode: number; readonly response: unknown };

/**
 * Send idempotency (spec 8.2) on the `api.idempotency_keys` table, per account for 24 hours. The
 * first request inserts the key `in_progress`; a concurrent one finds it and gets 409; a later one
 * with the same body gets the stored answer; with another body, 422. A key whose first request
 * failed is deleted, so it can be used again; one left `in_progress` by a crashed process is taken
 * over after a minute (the message id derives from the key, so a retry cannot send twice).
 */
export class IdempotencyKeys {
  constructor(private readonly pool: Pool) {}

  static validate(key: string | undefined): string | undefined {
    if (key === undefined) return undefined;
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) throw gatewayError('idempotency_key_invalid');
    return key;
  }

  static requestHash(route: string, body: unknown): string {
    return createHash('sha256').update(route).update('\n').update(canonicalJson(body)).digest('hex');
  }

  async claim(accountId: string, key: string, requestHash: string): Promise<Claim> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO api.idempotency_keys AS k (account_id, key, request_hash, state) VALUES ($1, $2, $3, 'in_progress')
       ON CONFLICT (account_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'in_progress',
         status_code = NULL, response = NULL, created_at = now()
       WHERE k.created_at < now() - interval '24 hours' OR (k.state = 'in_progress' AND k.created_at < now() - interval '1 minute')`,
      [accountId, key, requestHash],
    );
    if (rowCount === 1) return { kind: 'claimed' };
    const { rows } = await this.pool.query<{ request_hash: string; state: string; status_code: number | null; response: unknown }>(
      'SELECT request_hash, state, status_code, response FROM api.idempotency_keys WHERE account_id = $1 AND key = $2',
      [accountId, key],
    );
    const row = rows[0];
    // Deleted in between (the first request failed): the key is free again.
    if (!row) return this.claim(accountId, key, requestHash);
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
    await this.pool.query(`DELETE FROM api.idempotency_keys WHERE account_id = $1 AND key = $2 AND state = 'in_progress'`, [accountId, key]);
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

/** The message id of an idempotent send: the same for every retry of the same key. */
export function idempotentMessageId(accountId: string, key: string): string {
  const digest = createHash('sha256').update(`${accountId}\n${key}`).digest('base64url').replace(/[-_]/g, '').slice(0, 24);
  return `msg_${digest.toLowerCase()}`;
}
