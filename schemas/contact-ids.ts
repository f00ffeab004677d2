import { hash } from 'node:crypto';
import { asEventId, type EventId } from './ids.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** An id with a readable prefix derived from `parts` (80 bits of SHA-256): the same parts, the same id. */
function digestId(prefix: string, ...parts: readonly string[]): string {
  const digest = hash('sha256', parts.join('\n'), 'buffer');
  let id = '';
  for (const byte of digest.subarray(0, 16)) id += BASE32[byte & 31];
  return `${prefix}_${id}`;
}

/**
 * A contact's id follows from its account and phone, so every writer (import, API, the keyword
 * opt-out of an unknown customer, a replay) names the same contact alike without a lookup.
 */
export function contactId(accountId: string, phone: string): string {
  return digestId('ct', accountId, phone);
}

/** The contact.opted_out event of an inbound keyword: a redelivered or replayed record repeats its id. */
export function keywordOptOutEventId(inboundEventId: string): EventId {
  return asEventId(digestId('evt', inboundEventId, 'contact.opted_out'));
}

/** A phone's entry on one of the account's lists: listing it again names (and replaces) the same entry. */
export function listedPhoneId(accountId: string, list: 'suppressions' | 'blocklist', phone: string): string {
  return digestId(list === 'suppressions' ? 'sup' : 'blk', accountId, phone);
}

/** A contact's membership of a contact group (the key of its `gw.audience` record). */
export function groupMemberId(groupId: string, contactId: string): string {
  return `${groupId}:${contactId}`;
}
