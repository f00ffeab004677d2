import { hash } from 'node:crypto';
import { asEventId, asMessageId, derivedId, newId, type EventId, type InstanceId, type MessageId } from '../../schemas/ids.js';
import type { SendStatus } from '../../schemas/records.js';

export const newEventId = (): EventId => asEventId(newId('evt'));

/** A receipt the network repeats collapses into the same event. */
export const statusEventId = (messageId: MessageId, status: SendStatus): EventId => asEventId(derivedId('evt', 'status', messageId, status));

/** A message the network delivers twice collapses into the same event and message. */
export const inboundEventId = (instanceId: InstanceId, waMessageId: string): EventId =>
  asEventId(derivedId('evt', 'inbound', instanceId, waMessageId));

export const inboundMessageId = (instanceId: InstanceId, waMessageId: string): MessageId =>
  asMessageId(derivedId('msg', instanceId, waMessageId));

/**
 * The network id of part `part` (a bubble) of one of our sends, derived from the message id and
 * shaped like the ids the network's own clients make (`3EB0` and 18 hex characters). A send cut by
 * a crash is sent again under the same ids, and the network keeps one message per id, so the
 * recipient gets it once whichever run reached the network.
 */
export function sentNetworkId(messageId: MessageId, part: number): string {
  const digest = hash('sha256', `send\u0000${messageId}\u0000${part}`);
  return `3EB0${digest.slice(0, 18).toUpperCase()}`;
}
