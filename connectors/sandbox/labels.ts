import type { ActionDone, ChatLabel, LabelChat, LabelList } from '../../schemas/records.js';
import { QueryRefused } from '../network/query.js';
import type { SandboxChats } from './chats.js';

/** The five labels WhatsApp Business gives every account, with their ids and colors there. */
const PREDEFINED: readonly Omit<ChatLabel, 'chat_jids'>[] = [
  { id: '1', name: 'New customer', color: 0 },
  { id: '2', name: 'New order', color: 1 },
  { id: '3', name: 'Pending payment', color: 2 },
  { id: '4', name: 'Paid', color: 3 },
  { id: '5', name: 'Order complete', color: 4 },
];

/** Labels on the sandbox network: every sandbox number is a business account with the predefined labels. */
export class SandboxLabels {
  constructor(private readonly chats: SandboxChats) {}

  list(withChats: boolean): LabelList {
    const labelled = [...this.chats.labelled()];
    const chatsWith = (id: string) => (withChats ? labelled.filter(([, labels]) => labels.has(id)).map(([jid]) => jid) : []);
    return { kind: 'labels', labels: PREDEFINED.map((label) => ({ ...label, chat_jids: chatsWith(label.id) })) };
  }

  label(query: LabelChat): ActionDone {
    if (!PREDEFINED.some((label) => label.id === query.label_id)) throw new QueryRefused('invalid_request', `the number has no label ${query.label_id}`);
    const labels = this.chats.labelsOf(query.chat_jid);
    if (query.add) labels.add(query.label_id);
    else labels.delete(query.label_id);
    return { kind: 'action_done', detail: null };
  }
}
