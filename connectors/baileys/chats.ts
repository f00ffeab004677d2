import { isJidGroup, jidNormalizedUser, type BaileysEventMap, type ChatModification, type MinimalMessage, type WAMessage, type WASocket } from '@whiskeysockets/baileys';
import type { ActionDone, ChatAction, ChatList } from '../../schemas/records.js';
import { chatList } from '../network/chat-list.js';

/** Chats a session keeps. */
const KEPT = 5_000;

interface Chat {
  name: string | null;
  unread: number;
  archived: boolean;
  pinned: boolean;
  lastAt: number | null;
  /** The last message, which the network wants with an archive or a read mark. */
  last: MinimalMessage | null;
  labels: Set<string>;
}

const seconds = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value) * 1000 || null);

/**
 * The number's chats as the network tells them (`chats.upsert`, `chats.update`, `chats.delete`,
 * the app state synced at login) and as messages move them. Baileys keeps no store of them: this
 * is the session's, in memory, rebuilt from the network's sync each time the socket opens.
 */
export class ChatBook {
  private readonly chats = new Map<string, Chat>();

  learn(batch: Partial<BaileysEventMap>): void {
    for (const chat of [...(batch['chats.upsert'] ?? []), ...(batch['chats.update'] ?? [])]) {
      if (!chat.id) continue;
      const entry = this.entry(jidNormalizedUser(chat.id));
      if (chat.name) entry.name = chat.name;
      if (typeof chat.unreadCount === 'number') entry.unread = chat.unreadCount;
      if (typeof chat.archived === 'boolean') entry.archived = chat.archived;
      if (chat.pinned !== undefined) entry.pinned = Boolean(chat.pinned);
      entry.lastAt = seconds(chat.conversationTimestamp) ?? seconds(chat.lastMessageRecvTimestamp) ?? entry.lastAt;
    }
    for (const id of batch['chats.delete'] ?? []) this.chats.delete(jidNormalizedUser(id));
    const upsert = batch['messages.upsert'];
    for (const message of upsert?.messages ?? []) this.message(message, upsert?.type === 'notify');
  }

  /** A chat's label changes (`labels.association`). */
  labelled(chatJid: string, labelId: string, add: boolean): void {
    const labels = this.entry(jidNormalizedUser(chatJid)).labels;
    if (add) labels.add(labelId);
    else labels.delete(labelId);
  }

  /** The chats that carry a label. */
  labelledWith(labelId: string): string[] {
    return [...this.chats].filter(([, chat]) => chat.labels.has(labelId)).map(([jid]) => jid);
  }

  list(limit: number): ChatList {
    return chatList(this.chats, limit);
  }

  /** The network's form of an action on a chat, with the last message it asks for when known. */
  modification(chatJid: string, action: ChatAction): ChatModification {
    const last = this.chats.get(chatJid)?.last;
    const lastMessages = last ? [last] : [];
    switch (action) {
      case 'archive':
      case 'unarchive':
        return { archive: action === 'archive', lastMessages };
      case 'read':
      case 'unread':
        return { markRead: action === 'read', lastMessages };
      case 'pin':
      case 'unpin':
        return { pin: action === 'pin' };
    }
  }

  /** What the number shows once the network took the action. */
  applied(chatJid: string, action: ChatAction): void {
    const chat = this.entry(chatJid);
    if (action === 'archive' || action === 'unarchive') chat.archived = action === 'archive';
    else if (action === 'read') chat.unread = 0;
    else if (action === 'unread') chat.unread = -1;
    else chat.pinned = action === 'pin';
  }

  /** A message moves its chat; a new one not from us (not history) counts as unread. */
  private message(message: WAMessage, isNew: boolean): void {
    const jid = message.key.remoteJid;
    if (!jid || !message.key.id || jid === 'status@broadcast') return;
    const chat = this.entry(jidNormalizedUser(jid));
    const at = seconds(message.messageTimestamp);
    if (at !== null && at >= (chat.lastAt ?? 0)) {
      chat.lastAt = at;
      // A group message not from us must name its author, or the network refuses the range.
      if (message.key.fromMe || !isJidGroup(jid) || message.key.participant) chat.last = { key: message.key, messageTimestamp: message.messageTimestamp };
    }
    if (!message.key.fromMe && isNew && chat.unread >= 0) chat.unread += 1;
    else if (message.key.fromMe) chat.unread = 0;
  }

  private entry(jid: string): Chat {
    let chat = this.chats.get(jid);
    if (chat === undefined) {
      chat = { name: null, unread: 0, archived: false, pinned: false, lastAt: null, last: null, labels: new Set() };
      this.chats.set(jid, chat);
      if (this.chats.size > KEPT) this.chats.delete(this.chats.keys().next().value!);
    }
    return chat;
  }
}

/** Archives, marks read or unread, or pins a chat (Baileys chatModify, an app state patch). */
export async function modifyChat(socket: Pick<WASocket, 'chatModify'>, book: ChatBook, chatJid: string, action: ChatAction): Promise<ActionDone> {
  await socket.chatModify(book.modification(chatJid, action), chatJid);
  book.applied(chatJid, action);
  return { kind: 'action_done', detail: null };
}
