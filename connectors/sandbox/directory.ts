import type { PhoneCheck } from '../../schemas/records.js';
import { phoneJid } from '../../schemas/phones.js';

/**
 * Who is on the sandbox network: a phone whose last four digits are 9999 is not on it, every other
 * phone is; a lid is on it and stays a lid (nothing resolves it here).
 */
export function sandboxChecks(phones: readonly string[]): PhoneCheck[] {
  return phones.map((phone): PhoneCheck => {
    if (phone.endsWith('@lid')) return { phone, on_network: true, jid: phone, lid: phone };
    if (phone.endsWith('9999')) return { phone, on_network: false, jid: null, lid: null };
    return { phone, on_network: true, jid: phoneJid(phone), lid: null };
  });
}
