import type { EventId } from '../../schemas/ids.js';
import type { InboundMessage, PublicEvent } from '../../schemas/records.js';
import { isOptOutKeyword } from './keywords.js';
import { phoneOfJid } from '../../schemas/phones.js';

export const KEYWORD_SOURCE = 'keyword:inbound';

/**
 * The phone a received message opts out: a customer's text in a direct chat whose whole body is
 * an opt-out keyword. Group messages do not count, and neither does a customer known only by an
 * unresolved lid (the contact base is keyed by phone).
 */
export function keywordOptOutPhone(message: InboundMessage): string | undefined {
  if (message.origin !== 'customer' || message.group !== null) return undefined;
  if (message.content.kind !== 'text' || !isOptOutKeyword(message.content.body)) return undefined;
  return message.sender.phone ?? phoneOfJid(message.chat_jid);
}

/** The public `contact.opted_out` event (spec 6.1) of a keyword opt-out. */
export function optedOutEvent(message: InboundMessage, contact: { id: string; phone: string }, eventId: EventId): PublicEvent {
  return {
    event_id: eventId,
    occurred_at: message.occurred_at,
    account_id: message.account_id,
    project_id: message.project_id,
    instance_id: message.instance_id,
    event_type: 'contact.opted_out',
    scope: 'project',
    client_reference: null,
    group: null,
    sender: message.sender,
    mentions: [],
    payload_json: JSON.stringify({ source: KEYWORD_SOURCE, phone: contact.phone, contact_id: contact.id }),
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
  };
}
