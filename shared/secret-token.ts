import { hash, randomBytes } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A secret with a readable prefix, e.g. `cs_` and 32 base62 characters (190 bits). */
export function secretToken(prefix: string, length = 32): string {
  const bytes = randomBytes(length);
  let secret = '';
  for (const byte of bytes) secret += BASE62[byte % 62];
  return `${prefix}${secret}`;
}

/**
 * The SHA-256 of a secret as stored: secrets themselves are never kept. Lookups go by this hash,
 * an index lookup of a digest, so a guess learns nothing from timing about the stored secrets.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret);
}
