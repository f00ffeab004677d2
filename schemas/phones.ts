/**
 * Phones and jids, in one place. The API takes phones in E.164 (`+5511999998888`: a plus, 7 to 15
 * digits, no leading zero); the network names people by jids: `<digits>@s.whatsapp.net` for a
 * phone, `<digits>@lid` for a privacy identity, `<digits>-<digits>@g.us` for a group.
 */

/** Pattern sources, for JSON schemas and the checks below. */
export const patterns = {
  e164: '\\+[1-9][0-9]{6,14}',
  phoneJid: '[0-9]{6,20}@s\\.whatsapp\\.net',
  lid: '[0-9]{6,25}@lid',
  groupJid: '[0-9-]{6,40}@g\\.us',
} as const;

/** An anchored pattern that accepts any of the given kinds. */
export function anyOf(...kinds: readonly (keyof typeof patterns)[]): string {
  return `^(${kinds.map((kind) => patterns[kind]).join('|')})$`;
}

const PHONE_SUFFIX = '@s.whatsapp.net';
const E164 = new RegExp(`^${patterns.e164}$`);
const PHONE_JID = /^([1-9]\d{6,14})@s\.whatsapp\.net$/;

/** A phone as people write it (`+55 (11) 99999-0000`) in E.164, or undefined when it is not one. */
export function normalizePhone(input: string): string | undefined {
  const compact = input.trim().replace(/[\s().-]/g, '');
  return E164.test(compact) ? compact : undefined;
}

/** `+5511999998888` → `5511999998888@s.whatsapp.net`. */
export function phoneJid(e164: string): string {
  return `${e164.replace(/^\+/, '')}${PHONE_SUFFIX}`;
}

/** `5511999998888@s.whatsapp.net` → `+5511999998888`; undefined for lids, groups and other jids. */
export function phoneOfJid(jid: string): string | undefined {
  const digits = PHONE_JID.exec(jid)?.[1];
  return digits === undefined ? undefined : `+${digits}`;
}

export function isLid(jid: string): boolean {
  return jid.endsWith('@lid');
}

export function isGroupJid(jid: string): boolean {
  return jid.endsWith('@g.us');
}

/** An E.164 phone or any jid, as a jid. */
export function toJid(phoneOrJid: string): string {
  return phoneOrJid.includes('@') ? phoneOrJid : phoneJid(phoneOrJid);
}
