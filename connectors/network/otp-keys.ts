import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Cipher } from '../../shared/cipher.js';
import { runDdl } from '../../shared/ddl.js';
import type { OtpOpener } from './connector.js';

/**
 * An OTP code is sealed under a key of its own, kept here and nowhere else until its send is done
 * or its lifetime has passed; then the key is deleted, and the code's ciphertext, which stays on
 * `gw.commands.send` for the topic's retention, can no longer be opened by anyone (crypto-shredding).
 * Sealed form: `k1.<key id>.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
const DDL = [
  `CREATE SCHEMA IF NOT EXISTS connector`,
  `CREATE TABLE IF NOT EXISTS connector.otp_keys (
    key_id text PRIMARY KEY,
    key bytea NOT NULL,
    expires_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS otp_keys_by_expiry ON connector.otp_keys (expires_at)`,
];

/** How long a code without `expiry_minutes` can still be sent. */
export const DEFAULT_OTP_LIFETIME_MS = 10 * 60_000;

const VERSION = 'k1';

export interface OtpSealer {
  /** Seals a code under a new key that lives `lifetimeMs`. */
  seal(code: string, lifetimeMs: number): Promise<string>;
}

export class OtpKeys implements OtpSealer {
  constructor(private readonly pool: Pool) {}

  ensureSchema(): Promise<void> {
    return runDdl(this.pool, 'connector.otp_keys', DDL);
  }

  async seal(code: string, lifetimeMs: number): Promise<string> {
    const keyId = randomUUID();
    const key = randomBytes(32);
    await this.pool.query(`INSERT INTO connector.otp_keys (key_id, key, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')`, [keyId, key, lifetimeMs]);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(code, 'utf8'), cipher.final()]);
    return [VERSION, keyId, ...[iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'))].join('.');
  }

  /** The code, or undefined once its key is gone (destroyed after its send, or past its lifetime). */
  async open(sealed: string): Promise<string | undefined> {
    const parts = parseSealed(sealed);
    const { rows } = await this.pool.query<{ key: Buffer }>(`SELECT key FROM connector.otp_keys WHERE key_id = $1 AND expires_at > now()`, [parts.keyId]);
    const key = rows[0]?.key;
    if (key === undefined) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', key, parts.iv);
    decipher.setAuthTag(parts.tag);
    return Buffer.concat([decipher.update(parts.body), decipher.final()]).toString('utf8');
  }

  /** Deletes the keys of these sealed codes: from now on they open to nothing. */
  async destroy(sealed: readonly string[]): Promise<void> {
    const ids = sealed.filter(isKeyed).map((s) => parseSealed(s).keyId);
    if (ids.length > 0) await this.pool.query(`DELETE FROM connector.otp_keys WHERE key_id = ANY($1)`, [ids]);
  }

  /** Deletes every key past its lifetime (a send that never ran: its number gone, its command dead-lettered). */
  async purgeExpired(): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM connector.otp_keys WHERE expires_at <= now()`);
    return rowCount ?? 0;
  }
}

/** Whether a sealed code is under a key of its own (`k1`), not the gateway's cipher (`v1`, written before keys). */
export function isKeyed(sealed: string): boolean {
  return sealed.startsWith(`${VERSION}.`);
}

function parseSealed(sealed: string) {
  const [version, keyId, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || !keyId || !iv || !tag || body === undefined) throw new Error('not a keyed OTP code');
  return { keyId, iv: Buffer.from(iv, 'base64url'), tag: Buffer.from(tag, 'base64url'), body: Buffer.from(body, 'base64url') };
}

/**
 * The codes of the sends a worker is about to execute, opened beforehand (the sessions open them
 * synchronously while building the messages) and forgotten with their keys once the sends are done.
 * A code sealed by the gateway's cipher (commands written before per-code keys) opens with it.
 */
export class OpenedOtpCodes implements OtpOpener {
  private readonly codes = new Map<string, string>();

  constructor(
    private readonly keys: OtpKeys,
    private readonly cipher: Cipher,
  ) {}

  /** Opens the code for the send ahead; false when its key is gone (the send fails as `otp_expired`). */
  async load(sealed: string): Promise<boolean> {
    if (!isKeyed(sealed)) return true;
    const code = await this.keys.open(sealed);
    if (code === undefined) return false;
    this.codes.set(sealed, code);
    return true;
  }

  open(sealed: string): string {
    if (!isKeyed(sealed)) return this.cipher.open(sealed);
    const code = this.codes.get(sealed);
    if (code === undefined) throw new Error('the OTP code was not opened before its send');
    return code;
  }

  /** Forgets the codes and destroys their keys: called once the sends' outcomes are stored. */
  async done(sealed: readonly string[]): Promise<void> {
    for (const s of sealed) this.codes.delete(s);
    await this.keys.destroy(sealed);
  }
}
