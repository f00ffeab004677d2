import type { BaileysEventMap } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { ChatBook } from '../../connectors/baileys/chats.js';
import { LabelBook } from '../../connectors/baileys/labels.js';

const ana = '5511988887777@s.whatsapp.net';
/** A chat association as Baileys emits it (`LabelAssociationType.Chat` is `label_jid`). */
const onChat = (labelId: string) => ({ type: 'label_jid', chatId: ana, labelId }) as BaileysEventMap['labels.association']['association'];

/** A socket of a number on the given platform (creds.platform: smba / smbi for WhatsApp Business). */
function socketOn(platform: string | undefined) {
  const calls: unknown[][] = [];
  return {
    calls,
    socket: {
      authState: { creds: { platform } },
      addChatLabel: async (...args: unknown[]) => void calls.push(['addChatLabel', ...args]),
      removeChatLabel: async (...args: unknown[]) => void calls.push(['removeChatLabel', ...args]),
    } as unknown as Parameters<LabelBook['label']>[0],
  };
}

describe('Baileys labels', () => {
  it('keeps labels.edit and labels.association as Baileys emits them from the app state sync', () => {
    const book = new LabelBook(new ChatBook());
    const edits: BaileysEventMap['labels.edit'][] = [
      { id: '1', name: 'New customer', color: 0, deleted: false, predefinedId: '1' },
      { id: '7', name: 'VIP', color: 12, deleted: false },
      { id: '9', name: 'Old', color: 3, deleted: false },
      { id: '9', name: 'Old', color: 3, deleted: true },
    ];
    for (const edit of edits) book.learn({ 'labels.edit': edit });
    book.learn({ 'labels.association': { type: 'add', association: onChat('7') } });
    expect(book.list(socketOn('smba').socket, true)).toEqual({
      kind: 'labels',
      labels: [
        { id: '1', name: 'New customer', color: 0, chat_jids: [] },
        { id: '7', name: 'VIP', color: 12, chat_jids: [ana] },
      ],
    });
    book.learn({ 'labels.association': { type: 'remove', association: onChat('7') } });
    expect(book.list(socketOn('smbi').socket, true).labels[1]!.chat_jids).toEqual([]);
  });

  it('labels a chat on a business number, and refuses labels with not_supported on any other', async () => {
    const book = new LabelBook(new ChatBook());
    book.learn({ 'labels.edit': { id: '7', name: 'VIP', color: 12, deleted: false } });
    const business = socketOn('smba');
    await book.label(business.socket, { kind: 'label_chat', chat_jid: ana, label_id: '7', add: true });
    await book.label(business.socket, { kind: 'label_chat', chat_jid: ana, label_id: '7', add: false });
    expect(business.calls).toEqual([['addChatLabel', ana, '7'], ['removeChatLabel', ana, '7']]);
    await expect(book.label(business.socket, { kind: 'label_chat', chat_jid: ana, label_id: '8', add: true })).rejects.toMatchObject({ code: 'invalid_request' });

    const personal = socketOn('android');
    expect(() => book.list(personal.socket, true)).toThrow(expect.objectContaining({ code: 'not_supported' }) as Error);
    await expect(book.label(personal.socket, { kind: 'label_chat', chat_jid: ana, label_id: '7', add: true })).rejects.toMatchObject({ code: 'not_supported' });
    expect(() => book.list(socketOn(undefined).socket, false)).toThrow(/Business/);
    expect(personal.calls).toEqual([]);
  });
});
