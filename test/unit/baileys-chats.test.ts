import type { ChatModification, WAMessage } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { ChatBook, modifyChat } from '../../connectors/baileys/chats.js';

const ana = '5511988887777@s.whatsapp.net';
const group = '120363025246125888@g.us';

/** A received message as messages.upsert carries it (a WAMessage with key and a seconds timestamp). */
const received = (id: string, remoteJid: string, at: number, extra: Partial<WAMessage['key']> = {}): WAMessage =>
  ({ key: { remoteJid, fromMe: false, id, ...extra }, messageTimestamp: at, message: { conversation: 'hi' } });

describe('Baileys chats', () => {
  it('keeps chats from chats.upsert, chats.update and new messages, most recent first', () => {
    const book = new ChatBook();
    // App state sync at login: proto.IConversation fields, timestamps in seconds, pinned a timestamp.
    book.learn({ 'chats.upsert': [{ id: ana, name: 'Ana', unreadCount: 2, conversationTimestamp: 1_764_100_000, archived: false }, { id: group, name: 'Team', pinned: 1_764_000_000, conversationTimestamp: 1_764_000_000 }] });
    book.learn({ 'chats.update': [{ id: group, archived: true }] });
    book.learn({ 'messages.upsert': { type: 'notify', messages: [received('M1', ana, 1_764_100_100)] } });
    // History is not unread.
    book.learn({ 'messages.upsert': { type: 'append', messages: [received('M0', group, 1_763_000_000, { participant: ana })] } });
    expect(book.list(10)).toEqual({
      kind: 'chats',
      chats: [
        { jid: ana, name: 'Ana', unread_count: 3, archived: false, pinned: false, last_message_at: 1_764_100_100_000, label_ids: [] },
        { jid: group, name: 'Team', unread_count: 0, archived: true, pinned: true, last_message_at: 1_764_000_000_000, label_ids: [] },
      ],
    });
    book.learn({ 'chats.delete': [group] });
    expect(book.list(10).chats.map((c) => c.jid)).toEqual([ana]);
  });

  it('archives and marks read with the last message the network wants, pins without, and shows the result', async () => {
    const book = new ChatBook();
    book.learn({ 'messages.upsert': { type: 'notify', messages: [received('M1', ana, 1_764_100_100)] } });
    const asked: [ChatModification, string][] = [];
    const socket = { chatModify: async (mod: ChatModification, jid: string) => void asked.push([mod, jid]) };
    await modifyChat(socket, book, ana, 'archive');
    await modifyChat(socket, book, ana, 'read');
    await modifyChat(socket, book, ana, 'pin');
    const last = { key: { remoteJid: ana, fromMe: false, id: 'M1' }, messageTimestamp: 1_764_100_100 };
    expect(asked).toEqual([
      [{ archive: true, lastMessages: [last] }, ana],
      [{ markRead: true, lastMessages: [last] }, ana],
      [{ pin: true }, ana],
    ]);
    expect(book.list(1).chats[0]).toMatchObject({ archived: true, unread_count: 0, pinned: true });
    await modifyChat(socket, book, ana, 'unread');
    expect(book.list(1).chats[0]).toMatchObject({ unread_count: -1 });
  });
});
