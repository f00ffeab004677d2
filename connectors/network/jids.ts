/** Jids of the network: `<digits>@s.whatsapp.net` for phones, `<digits>@lid` for privacy identities, `@g.us` for groups. */

const PHONE_SUFFIX = '@s.whatsapp.net';

/** `+5511999998888` → `5511999998888@s.whatsapp.net`. */
export function phoneJid(e164: string): string {
  return `${e164.replace(/^\+/, '')}${PHONE_SUFFIX}`;
}

/** `5511999998888@s.whatsapp.net` → `+5511999998888`; undefined for lids and groups. */
export function phoneOfJid(jid: string): string | undefined {
  return jid.endsWith(PHONE_SUFFIX) ? `+${jid.slice(0, -PHONE_SUFFIX.length)}` : undefined;
}

export function isLid(jid: string): boolean {
  return jid.endsWith('@lid');
}

/** An E.164 phone or any jid, as a jid. */
export function toJid(phoneOrJid: string): string {
  return phoneOrJid.includes('@') ? phoneOrJid : phoneJid(phoneOrJid);
}
