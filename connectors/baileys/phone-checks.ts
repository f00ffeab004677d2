import { isLidUser, jidNormalizedUser, type WASocket } from '@whiskeysockets/baileys';
import type { PhoneCheck } from '../../schemas/records.js';
import { phoneJid, phoneOfJid } from '../../schemas/phones.js';

/**
 * Asks the network, in one query, which phones are on it (`onWhatsApp`). A lid cannot be asked
 * (the network answers phones only): it is on the network by being a lid, with its phone when the
 * number has learnt the mapping. Results keep the order asked.
 */
export async function checkPhones(socket: Pick<WASocket, 'onWhatsApp' | 'signalRepository'>, phones: readonly string[]): Promise<PhoneCheck[]> {
  const asked = phones.filter((phone) => !isLidUser(phone));
  const found = new Map<string, string>();
  if (asked.length > 0) {
    for (const { jid, exists } of (await socket.onWhatsApp(...asked.map(phoneJid))) ?? []) {
      const phone = phoneOfJid(jidNormalizedUser(jid));
      if (exists && phone !== undefined) found.set(phone, jidNormalizedUser(jid));
    }
  }
  return Promise.all(
    phones.map(async (phone): Promise<PhoneCheck> => {
      if (isLidUser(phone)) {
        const pn = await socket.signalRepository.lidMapping.getPNForLID(phone).catch(() => null);
        return { phone, on_network: true, jid: pn ? jidNormalizedUser(pn) : phone, lid: phone };
      }
      const jid = found.get(phone);
      return { phone, on_network: jid !== undefined, jid: jid ?? null, lid: null };
    }),
  );
}
