import type { InboundMessage, SendCommand } from '../../schemas/records.js';

/** The network id of the message a reaction, an edit or a deletion is about; null for other content. */
export function targetOf(content: SendCommand['content'] | InboundMessage['content']): string | null {
  switch (content.kind) {
    case 'reaction':
    case 'edit':
    case 'delete':
      return content.quoted_message_id;
    default:
      return null;
  }
}
