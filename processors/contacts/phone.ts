/**
 * Phones as the API takes them (E.164) and as the network names them (phone jids). E.164 allows
 * 15 digits at most; we also ask for 7 at least, the shortest national numbers in use.
 */
const E164 = /^\+[1-9]\d{6,14}$/;
const PHONE_JID = /^([1-9]\d{6,14})@s\.whatsapp\.net$/;

/** A phone as people write it (`+55 (11) 99999-0000`) in E.164, or undefined when it is not one. */
export function normalizePhone(input: string): string | undefined {
  const compact = input.trim().replace(/[\s().-]/g, '');
  return E164.test(compact) ? compact : undefined;
}

/** `+5511999990000` → `5511999990000@s.whatsapp.net`. */
export function phoneJid(e164: string): string {
  return `${e164.slice(1)}@s.whatsapp.net`;
}

/** The E.164 phone of a phone jid; undefined for groups, lids and other jids. */
export function phoneOfJid(jid: string): string | undefined {
  const digits = PHONE_JID.exec(jid)?.[1];
  return digits === undefined ? undefined : `+${digits}`;
}
