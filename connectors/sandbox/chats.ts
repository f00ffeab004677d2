import type { ActionDone, ChatAction, ChatList } from '../../schemas/records.js';
import { chatList } from '../network/chat-list.js';
import { QueryRefused } from '../network/query.js';

const KEPT = 1_000;

interface Chat {
  name: string | null;
  unread: number;
  archived: boolean;
  pinned: boolean;
  lastAt: number;
  labels: Set<string>;
}

/**
 * The chats of a sandbox number, as its messages make them: a customer's message opens or moves
 * a chat and counts as unread, the number's own sends move it and read it; actions change them as
 * the phone would (a new message brings an archived chat back, as on the network).
 */
export class SandboxChats {
  private readonly chats = new Map<string, Chat>();

  received(jid: string, name: string | null, at: number): void {
    const chat = this.entry(jid, at);
    if (name !== null) chat.name = name;
    chat.unread = Math.max(chat.unread, 0) + 1;
    chat.archived = false;
  }

  sent(jid: string, at: number): void {
    this.entry(jid, at).unread = 0;
  }

  list(limit: number): ChatList {
    return chatList(this.chats, limit);
  }

  modify(jid: string, action: ChatAction): ActionDone {
    const chat = this.known(jid);
    if (action === 'archive' || action === 'unarchive') chat.archived = action === 'archive';
    else if (action === 'read') chat.unread = 0;
    else if (action === 'unread') chat.unread = -1;
    else chat.pinned = action === 'pin';
    return { kind: 'action_done', detail: null };
  }

  /** The labels on a chat the number has. */
  labelsOf(jid: string): Set<string> {
    return this.known(jid).labels;
  }

  /** Every chat with its labels. */
  labelled(): ReadonlyMap<string, ReadonlySet<string>> {
    return new Map([...this.chats].map(([jid, chat]) => [jid, chat.labels]));
  }

  private known(jid: string): Chat {
    const chat = this.chats.get(jid);
    if (chat === undefined) throw new QueryRefused('invalid_request', `the number has no chat with ${jid}`);
    return chat;
  }

  private entry(jid: string, at: number): Chat {
    const chat = this.chats.get(jid) ?? { name: null, unread: 0, archived: false, pinned: false, lastAt: at, labels: new Set<string>() };
    chat.lastAt = Math.max(chat.lastAt, at);
    this.chats.delete(jid);
    this.chats.set(jid, chat);
    if (this.chats.size > KEPT) this.chats.delete(this.chats.keys().next().value!);
    return chat;
  }
}
