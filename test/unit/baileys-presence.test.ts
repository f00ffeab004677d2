import type { BaileysEventMap } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { PresenceBook, readPresence, setPresence } from '../../connectors/baileys/presence.js';
import { QueryRefused } from '../../connectors/network/index.js';

/** A socket that records what it is asked; `me` as Baileys' creds hold it after a pairing. */
function socketRecording(me: { id: string; name?: string } = { id: '5511900001111:3@s.whatsapp.net', name: 'Shop' }) {
  const calls: unknown[][] = [];
  return {
    calls,
    socket: {
      authState: { creds: { me } },
      sendPresenceUpdate: async (...args: unknown[]) => void calls.push(['sendPresenceUpdate', ...args]),
      presenceSubscribe: async (...args: unknown[]) => void calls.push(['presenceSubscribe', ...args]),
    } as unknown as Parameters<typeof setPresence>[0],
  };
}

describe('Baileys presence', () => {
  it('keeps the presence of presence.update as Baileys emits it (a `presence` node: online with last seen, then a chatstate)', () => {
    const book = new PresenceBook();
    // handlePresenceUpdate of a <presence from=... type="unavailable" last="1764100000"/> node.
    const offline: BaileysEventMap['presence.update'] = { id: '5511988887777@s.whatsapp.net', presences: { '5511988887777@s.whatsapp.net': { lastKnownPresence: 'unavailable', lastSeen: 1_764_100_000, groupOnlineCount: undefined } } };
    book.learn(offline, 1_764_100_500_000);
    expect(book.answer('5511988887777@s.whatsapp.net')).toEqual({
      kind: 'contact_presence', jid: '5511988887777@s.whatsapp.net', presence: 'unavailable', last_seen: 1_764_100_000_000, heard_at: 1_764_100_500_000,
    });
    // A <chatstate><composing media="audio"/></chatstate> in a group: per participant, last seen kept.
    book.learn({ id: '120363025246125888@g.us', presences: { '5511988887777@s.whatsapp.net': { lastKnownPresence: 'recording' } } }, 1_764_100_600_000);
    expect(book.answer('5511988887777@s.whatsapp.net')).toMatchObject({ presence: 'recording', last_seen: 1_764_100_000_000 });
    expect(book.answer('5511900002222@s.whatsapp.net')).toEqual({ kind: 'contact_presence', jid: '5511900002222@s.whatsapp.net', presence: 'unknown', last_seen: null, heard_at: null });
  });

  it('shows the number online without a chat and a typing state in a chat', async () => {
    const { socket, calls } = socketRecording();
    await setPresence(socket, { kind: 'set_presence', presence: 'available', chat_jid: null });
    await setPresence(socket, { kind: 'set_presence', presence: 'composing', chat_jid: '5511988887777@s.whatsapp.net' });
    await setPresence(socket, { kind: 'set_presence', presence: 'recording', chat_jid: '5511988887777@s.whatsapp.net' });
    expect(calls).toEqual([
      ['sendPresenceUpdate', 'available', undefined],
      ['sendPresenceUpdate', 'composing', '5511988887777@s.whatsapp.net'],
      ['sendPresenceUpdate', 'recording', '5511988887777@s.whatsapp.net'],
    ]);
  });

  it('refuses an online state for a number without a profile name (Baileys would drop it silently) and typing without a chat', async () => {
    const { socket, calls } = socketRecording({ id: '5511900001111:3@s.whatsapp.net' });
    await expect(setPresence(socket, { kind: 'set_presence', presence: 'available', chat_jid: null })).rejects.toMatchObject({ code: 'not_supported' });
    await expect(setPresence(socket, { kind: 'set_presence', presence: 'paused', chat_jid: null })).rejects.toBeInstanceOf(QueryRefused);
    expect(calls).toEqual([]);
  });

  it('subscribes to a contact and answers with the first presence the network sends back', async () => {
    const book = new PresenceBook();
    const { socket, calls } = socketRecording();
    const jid = '5511988887777@s.whatsapp.net';
    const read = readPresence(socket, book, jid, 2_000);
    book.learn({ id: jid, presences: { [jid]: { lastKnownPresence: 'available' } } });
    expect(await read).toMatchObject({ jid, presence: 'available', last_seen: null });
    expect(calls).toEqual([['presenceSubscribe', jid]]);
    // A contact who hides its presence: unknown once the wait is over.
    expect(await readPresence(socket, book, '5511900002222@s.whatsapp.net', 20)).toMatchObject({ presence: 'unknown' });
  });
});
