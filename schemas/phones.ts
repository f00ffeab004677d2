import { isSupportedCountry, parsePhoneNumberWithError, ParseError, validatePhoneNumberLength, type CountryCode } from 'libphonenumber-js/max';

/**
 * Phones and jids, in one place. People write phones in E.164 (`+5511999998888`), with a plus and
 * spaces (`+55 11 99999-8888`) or in their country's national format (`(11) 99999-8888`, which
 * needs the country); `parsePhone` checks them against that country's numbering plan and gives
 * E.164. The network names people by jids: `<digits>@s.whatsapp.net` for a phone, `<digits>@lid`
 * for a privacy identity, `<digits>-<digits>@g.us` for a group; jids are taken as they are.
 */

/** Pattern sources, for JSON schemas and the checks below. */
export const patterns = {
  e164: '\\+[1-9][0-9]{6,14}',
  /** A phone as people write it: digits with an optional plus, spaces, dots, dashes, slashes and parentheses. `parsePhone` decides. */
  written: '\\+?[0-9() ./-]{1,40}',
  /** ISO 3166 alpha-2, either case. */
  country: '[A-Za-z]{2}',
  phoneJid: '[0-9]{6,20}@s\\.whatsapp\\.net',
  lid: '[0-9]{6,25}@lid',
  groupJid: '[0-9-]{6,40}@g\\.us',
} as const;

/** An anchored pattern that accepts any of the given kinds. */
export function anyOf(...kinds: readonly (keyof typeof patterns)[]): string {
  return `^(${kinds.map((kind) => patterns[kind]).join('|')})$`;
}

const PHONE_SUFFIX = '@s.whatsapp.net';
const PHONE_JID = /^([1-9]\d{6,14})@s\.whatsapp\.net$/;

/**
 * Why a written phone is not one, as stable codes (the API echoes them): `not_a_number` (no digits
 * to read, or text around them), `missing_country` (a national number and no country to read it
 * in), `unknown_country` (the country given has no numbering plan), `invalid_country_code` (no
 * calling code in use after the plus, `+999...`), `too_short`, `too_long`, `invalid_length`
 * (between the country's shortest and longest, yet of no length in use there), `invalid_for_region`
 * (the right length, but not a number the country gives out: `+1 555 000 1111`).
 */
export const PHONE_PROBLEMS = [
  'not_a_number',
  'missing_country',
  'unknown_country',
  'invalid_country_code',
  'too_short',
  'too_long',
  'invalid_length',
  'invalid_for_region',
] as const;
export type PhoneProblem = (typeof PHONE_PROBLEMS)[number];

export type ParsedPhone =
  | { readonly ok: true; readonly e164: string; /** Null for non-geographic numbers (`+800`). */ readonly country: string | null }
  | { readonly ok: false; readonly reason: PhoneProblem };

const LENGTH_PROBLEMS: Readonly<Record<string, PhoneProblem>> = {
  NOT_A_NUMBER: 'not_a_number',
  TOO_SHORT: 'too_short',
  TOO_LONG: 'too_long',
  INVALID_LENGTH: 'invalid_length',
};

/** An ISO 3166 alpha-2 code (either case) with a numbering plan, upper-cased; undefined otherwise. */
export function countryCode(input: string): CountryCode | undefined {
  const code = input.trim().toUpperCase();
  return isSupportedCountry(code) ? code : undefined;
}

/**
 * Phones read lately, by text and country: a business writes to the same customers again and
 * again, and reading a phone against its numbering plan was a twentieth of a send's CPU.
 */
const parsedPhones = new Map<string, ParsedPhone>();
const PARSED_PHONES_KEPT = 10_000;

/**
 * A phone as people write it, in E.164 after the numbering plan of its country says it exists. A
 * number with a plus (or the default country's international prefix) names its own country; a
 * national one is read in `country` (ISO 3166 alpha-2). The whole text must be the number: no
 * words around it, no extension.
 */
export function parsePhone(input: string, country?: string | null): ParsedPhone {
  const key = `${country ?? ''}\u0000${input}`;
  const known = parsedPhones.get(key);
  if (known !== undefined) return known;
  const parsed = readPhone(input, country);
  parsedPhones.set(key, parsed);
  if (parsedPhones.size > PARSED_PHONES_KEPT) parsedPhones.delete(parsedPhones.keys().next().value!);
  return parsed;
}

function readPhone(input: string, country?: string | null): ParsedPhone {
  const defaultCountry = country === undefined || country === null ? undefined : countryCode(country);
  if (country !== undefined && country !== null && defaultCountry === undefined) return { ok: false, reason: 'unknown_country' };
  const text = input.trim();
  try {
    const parsed = parsePhoneNumberWithError(text, { defaultCountry, extract: false });
    if (parsed.ext !== undefined) return { ok: false, reason: 'not_a_number' };
    if (parsed.isValid()) return { ok: true, e164: parsed.number, country: parsed.country ?? null };
    const length = validatePhoneNumberLength(text, defaultCountry);
    return { ok: false, reason: (length !== undefined && LENGTH_PROBLEMS[length]) || 'invalid_for_region' };
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    if (error.message === 'INVALID_COUNTRY') return { ok: false, reason: text.startsWith('+') ? 'invalid_country_code' : 'missing_country' };
    return { ok: false, reason: LENGTH_PROBLEMS[error.message] ?? 'not_a_number' };
  }
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
