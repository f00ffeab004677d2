import { createHash } from 'node:crypto';
import { asEventId, asMessageId, newId, type EventId, type InstanceId, type MessageId } from '../../schemas/ids.js';
import type { SendStatus } from '../../schemas/records.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** An id shaped like `newId` (prefix, 16 base32 characters) but derived from `parts`, so a repeat gives the same id. */
export function derivedId(prefix: string, ...parts: readonly string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  let id = '';
  for (const byte of digest.subarray(0, 16)) id += BASE32[byte & 31];
  return `${prefix}_${id}`;
}

export const newEventId = (): EventId => asEventId(newId('evt'));

/** A receipt the network repeats collapses into the same event. */
export const statusEventId = (messageId: MessageId, status: SendStatus): EventId => asEventId(derivedId('evt', 'status', messageId, status));

/** A message the network delivers twice collapses into the same event and message. */
export const inboundEventId = (instanceId: InstanceId, waMessageId: string): EventId =>
  asEventId(derivedId('evt', 'inbound', instanceId, waMessageId));

export const inboundMessageId = (instanceId: InstanceId, waMessageId: string): MessageId =>
  asMessageId(derivedId('msg', instanceId, waMessageId));
