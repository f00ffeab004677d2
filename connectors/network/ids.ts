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
