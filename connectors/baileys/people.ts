import { isLidUser, jidNormalizedUser, type WASocket } from '@whiskeysockets/baileys';
import { phoneOfJid } from '../../schemas/phones.js';
import type { Sender } from '../../schemas/records.js';

/** The phone jid of a lid, when the number has learnt it. */
export type LidLookup = (lid: string) => string | undefined;

/**
 * The person behind a jid: the phone jid where it is known (from the alternate jid the network
 * sent along, or the lid mapping), else the stable lid; so one person is one chat, whichever
 * identity a message came under.
 */
export function personOf(jid: string, alt: string | null | undefined, name: string | null | undefined, phoneOfLid: LidLookup): Sender {
  const normal = jidNormalizedUser(jid);
  if (isLidUser(normal)) {
    const phoneJid = alt && !isLidUser(alt) ? jidNormalizedUser(alt) : phoneOfLid(normal);
    return { jid: phoneJid ?? normal, lid: normal, name: name || null, phone: phoneJid === undefined ? null : (phoneOfJid(phoneJid) ?? null) };
  }
  const lid = alt && isLidUser(alt) ? jidNormalizedUser(alt) : null;
  return { jid: normal, lid, name: name || null, phone: phoneOfJid(normal) ?? null };
}

/**
 * The number's own jids, from the creds the socket keeps up to date (`socket.user` is a copy taken
 * when Baileys built the socket's outer layers, so it stays empty after a pairing).
 */
export function ownJids(socket: Pick<WASocket, 'authState'>): { jid: string | null; lid: string | null } {
  const me = socket.authState.creds.me;
  return { jid: me?.id ? jidNormalizedUser(me.id) : null, lid: me?.lid ? jidNormalizedUser(me.lid) : null };
}
