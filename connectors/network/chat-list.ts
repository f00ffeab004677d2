import type { ChatList, ChatSummary } from '../../schemas/records.js';

/** What a session knows of a chat, whichever network it is on. */
export interface KnownChat {
  readonly name: string | null;
  readonly unread: number;
  readonly archived: boolean;
  readonly pinned: boolean;
  readonly lastAt: number | null;
  readonly labels: ReadonlySet<string>;
}

/** The `list_chats` answer: the most recently active chats first, at most `limit`. */
export function chatList(chats: Iterable<readonly [string, KnownChat]>, limit: number): ChatList {
  const summaries = [...chats].map(([jid, chat]): ChatSummary => ({
    jid,
    name: chat.name,
    unread_count: chat.unread,
    archived: chat.archived,
    pinned: chat.pinned,
    last_message_at: chat.lastAt,
    label_ids: [...chat.labels],
  }));
  summaries.sort((a, b) => (b.last_message_at ?? 0) - (a.last_message_at ?? 0));
  return { kind: 'chats', chats: summaries.slice(0, limit) };
}
