import type { OptedOutPayload } from '../payloads.js';
import type { EventId } from '../../schemas/ids.js';
import type { InboundMessage, PublicEvent } from '../../schemas/records.js';
import { scheduledEvent } from './event.js';

/** The opt-out source of a customer who sent a keyword. */
export const KEYWORD_SOURCE = 'keyword:inbound';

/** The public `contact.opted_out` event (spec 6.1) of a keyword opt-out. */
export function optedOutEvent(message: InboundMessage, contact: { id: string; phone: string }, eventId: EventId): PublicEvent {
  const payload: OptedOutPayload = { source: KEYWORD_SOURCE, phone: contact.phone, contact_id: contact.id };
  return scheduledEvent({
    event_id: eventId,
    occurred_at: message.occurred_at,
    account_id: message.account_id,
    project_id: message.project_id,
    instance_id: message.instance_id,
    event_type: 'contact.opted_out',
    sender: message.sender,
    payload,
  });
}
