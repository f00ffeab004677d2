import type { InboundMessage } from '../../schemas/records.js';
import { isOptOutKeyword } from './keywords.js';
import { phoneOfJid } from '../../schemas/phones.js';

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
