import { jidNormalizedUser, type BaileysEventMap, type WASocket } from '@whiskeysockets/baileys';
import type { ActionDone, ContactPresence, Presence, SetPresence } from '../../schemas/records.js';
import { QueryRefused } from '../network/query.js';

/** How long a presence read waits for the network's answer to the subscription. */
const SUBSCRIBE_WAIT_MS = 3_000;
/** Contacts whose last presence a session keeps. */
const KEPT = 2_000;

interface Heard {
  readonly presence: Presence;
  readonly lastSeen: number | null;
  readonly heardAt: number;
}

/**
 * The last presence the number heard of each contact (`presence.update`), so a read answers at
 * once what is known and a subscription's first answer reaches the reader that waits for it.
 */
export class PresenceBook {
  private readonly heard = new Map<string, Heard>();
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Takes a `presence.update`: one chat, a presence per participant (the contact itself outside groups). */
  learn(update: BaileysEventMap['presence.update'], now: number = Date.now()): void {
    for (const [participant, data] of Object.entries(update.presences)) {
      const jid = jidNormalizedUser(participant);
      const previous = this.heard.get(jid);
      // A typing state says nothing of when the contact was last seen: that one is kept.
      const lastSeen = data.lastSeen !== undefined ? data.lastSeen * 1000 : (previous?.lastSeen ?? null);
      this.heard.delete(jid);
      this.heard.set(jid, { presence: data.lastKnownPresence, lastSeen, heardAt: now });
      if (this.heard.size > KEPT) this.heard.delete(this.heard.keys().next().value!);
      for (const wake of this.waiting.get(jid) ?? []) wake();
    }
  }

  answer(jid: string): ContactPresence {
    const heard = this.heard.get(jid);
    return { kind: 'contact_presence', jid, presence: heard?.presence ?? 'unknown', last_seen: heard?.lastSeen ?? null, heard_at: heard?.heardAt ?? null };
  }

  /** Resolves when `jid` is next heard of, or after `ms`. */
  next(jid: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.get(jid)?.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiting.set(jid, (this.waiting.get(jid) ?? new Set()).add(wake));
    });
  }
}

type PresenceSocket = Pick<WASocket, 'sendPresenceUpdate' | 'presenceSubscribe' | 'authState'>;

/**
 * Shows the number online or offline, or a typing state in one chat. The network takes an online
 * state only from a number with a profile name: Baileys drops it silently otherwise, so it is refused here.
 */
export async function setPresence(socket: PresenceSocket, query: SetPresence): Promise<ActionDone> {
  const online = query.presence === 'available' || query.presence === 'unavailable';
  if (online && !socket.authState.creds.me?.name) throw new QueryRefused('not_supported', 'the number has no profile name yet: the network ignores its online state');
  if (!online && query.chat_jid === null) throw new QueryRefused('invalid_request', `${query.presence} needs a chat`);
  await socket.sendPresenceUpdate(query.presence === 'unknown' ? 'paused' : query.presence, online ? undefined : (query.chat_jid ?? undefined));
  return { kind: 'action_done', detail: null };
}

/**
 * The contact's last presence: a contact not heard of yet is subscribed to, and its first answer
 * waited for a moment (a contact who hides it never answers: `unknown`).
 */
export async function readPresence(socket: PresenceSocket, book: PresenceBook, jid: string, waitMs: number = SUBSCRIBE_WAIT_MS): Promise<ContactPresence> {
  const known = book.answer(jid);
  const heard = known.presence === 'unknown' ? book.next(jid, waitMs) : undefined;
  await socket.presenceSubscribe(jid);
  await heard;
  return book.answer(jid);
}
