import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { PairingMethod } from '../../schemas/records.js';
import type { PairingFact } from '../network/connector.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Network id of a simulated message, derived from its control so a repeated control gives the same message. */
export function simulatedWaId(controlId: string): string {
  return `SBX${sha256(controlId).toString('hex').slice(0, 17).toUpperCase()}`;
}

/** A phone for a number paired without one: +999 (no country) and nine digits from the instance id. */
export function derivedPhone(instanceId: string): string {
  return `+999${[...sha256(instanceId).subarray(0, 9)].map((byte) => byte % 10).join('')}`;
}

const CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';

/** A QR payload (valid 60 s) or an 8-character pairing code (valid 3 min), like the network's. */
export function pairingChallenge(method: PairingMethod, now: number): PairingFact {
  if (method === 'qr') {
    return { kind: 'pairing', method, value: `2@${randomBytes(24).toString('base64')},${randomBytes(32).toString('base64')}`, expires_at: now + 60_000 };
  }
  const code = Array.from({ length: 8 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
  return { kind: 'pairing', method, value: code, expires_at: now + 180_000 };
}
