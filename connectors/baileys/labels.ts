import { isWABusinessPlatform, type BaileysEventMap, type WASocket } from '@whiskeysockets/baileys';
import type { ActionDone, ChatLabel, LabelChat, LabelList } from '../../schemas/records.js';
import { QueryRefused } from '../network/query.js';
import type { ChatBook } from './chats.js';

interface Known {
  readonly name: string;
  readonly color: number;
}

type LabelSocket = Pick<WASocket, 'authState' | 'addChatLabel' | 'removeChatLabel'>;

/**
 * The labels of a business number (`labels.edit`, synced with the app state at login) and which
 * chats carry them (`labels.association`, kept on the chats). The network offers labels to
 * WhatsApp Business accounts only: any other number is refused with `not_supported`.
 */
export class LabelBook {
  private readonly labels = new Map<string, Known>();

  constructor(private readonly chats: ChatBook) {}

  learn(batch: Partial<BaileysEventMap>): void {
    const edit = batch['labels.edit'];
    if (edit) {
      if (edit.deleted) this.labels.delete(edit.id);
      else this.labels.set(edit.id, { name: edit.name, color: edit.color });
    }
    const change = batch['labels.association'];
    // Labels on messages (label_message) have no place in our chats.
    if (change !== undefined && !('messageId' in change.association)) {
      this.chats.labelled(change.association.chatId, change.association.labelId, change.type === 'add');
    }
  }

  list(socket: LabelSocket, withChats: boolean): LabelList {
    offered(socket);
    const labels = [...this.labels].map(([id, label]): ChatLabel => ({ id, name: label.name, color: label.color, chat_jids: withChats ? this.chats.labelledWith(id) : [] }));
    return { kind: 'labels', labels };
  }

  /** Puts a label on a chat or takes it off (Baileys addChatLabel / removeChatLabel, an app state patch). */
  async label(socket: LabelSocket, query: LabelChat): Promise<ActionDone> {
    offered(socket);
    if (!this.labels.has(query.label_id)) throw new QueryRefused('invalid_request', `the number has no label ${query.label_id}`);
    if (query.add) await socket.addChatLabel(query.chat_jid, query.label_id);
    else await socket.removeChatLabel(query.chat_jid, query.label_id);
    this.chats.labelled(query.chat_jid, query.label_id, query.add);
    return { kind: 'action_done', detail: null };
  }
}

function offered(socket: Pick<WASocket, 'authState'>): void {
  const platform = socket.authState.creds.platform;
  if (platform === undefined || !isWABusinessPlatform(platform)) throw new QueryRefused('not_supported', 'the network offers labels to WhatsApp Business accounts only');
}
