import { hash, randomFillSync } from 'node:crypto';

/**
 * Branded ids: strings at run time, distinct types at compile time, so an instance id cannot be
 * passed where a project id is expected. Record types generated from `schemas/` use them for
 * fields of the same name.
 */
declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

export type AccountId = Brand<string, 'AccountId'>;
export type ProjectId = Brand<string, 'ProjectId'>;
export type InstanceId = Brand<string, 'InstanceId'>;
export type MessageId = Brand<string, 'MessageId'>;
export type EventId = Brand<string, 'EventId'>;
export type ConnectionId = Brand<string, 'ConnectionId'>;
export type WebhookId = Brand<string, 'WebhookId'>;
export type PartnerId = Brand<string, 'PartnerId'>;

/** Field names whose values are branded ids, and the brand each carries. */
export const brandedFields = {
  account_id: 'AccountId',
  project_id: 'ProjectId',
  instance_id: 'InstanceId',
  message_id: 'MessageId',
  event_id: 'EventId',
  connection_id: 'ConnectionId',
  webhook_id: 'WebhookId',
  partner_id: 'PartnerId',
} as const;

export const asAccountId = (id: string) => id as AccountId;
export const asProjectId = (id: string) => id as ProjectId;
export const asInstanceId = (id: string) => id as InstanceId;
export const asMessageId = (id: string) => id as MessageId;
export const asEventId = (id: string) => id as EventId;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

// Random bytes are drawn 4 KB at a time, as Node's randomUUID does: one call into the system's
// generator per 256 ids rather than one each (a send takes two ids).
const RANDOM_POOL = Buffer.alloc(4096);
let randomAt = RANDOM_POOL.length;

/** A new random id with a readable prefix, e.g. `acc_4f7kq2m3x9d5hw8a`: 80 bits of randomness. */
export function newId(prefix: string): string {
  if (randomAt === RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    randomAt = 0;
  }
  let id = '';
  for (let i = randomAt; i < randomAt + 16; i++) id += BASE32[RANDOM_POOL[i]! & 31];
  randomAt += 16;
  return `${prefix}_${id}`;
}

/** An id shaped like `newId` (prefix, 16 base32 characters) but derived from `parts`, so a repeat gives the same id. */
export function derivedId(prefix: string, ...parts: readonly string[]): string {
  const digest = hash('sha256', parts.join('\u0000'), 'buffer');
  let id = '';
  for (const byte of digest.subarray(0, 16)) id += BASE32[byte & 31];
  return `${prefix}_${id}`;
}
