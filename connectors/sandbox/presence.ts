import type { ActionDone, ContactPresence, Presence, SetPresence } from '../../schemas/records.js';
import { QueryRefused } from '../network/query.js';
import { Recent } from './recent.js';

/** How long after a customer's message the sandbox shows the customer online. */
const ONLINE_FOR_MS = 60_000;
const KEPT = 1_000;

/** What the sandbox shows of a number's presence (tests read it). */
export interface PresenceView {
  readonly online: boolean;
  /** The last typing state shown in each chat. */
  readonly chats: Readonly<Record<string, Presence>>;
}

/**
 * Presence on the sandbox network: the number's own (offline until it says otherwise, as a Baileys
 * number that does not mark itself online on connect) and each customer's, online for a minute after
 * they wrote, then offline last seen then; a customer who never wrote is unknown.
 */
export class SandboxPresence {
  private online = false;
  private readonly chats = new Recent<string, Presence>(KEPT);
  private readonly shownChats = new Map<string, Presence>();
  private readonly wrote = new Recent<string, number>(KEPT);

  set(query: SetPresence): ActionDone {
    if (query.presence === 'available' || query.presence === 'unavailable') this.online = query.presence === 'available';
    else if (query.chat_jid === null) throw new QueryRefused('invalid_request', `${query.presence} needs a chat`);
    else {
      this.chats.set(query.chat_jid, query.presence);
      this.shownChats.set(query.chat_jid, query.presence);
    }
    return { kind: 'action_done', detail: null };
  }

  heardFrom(jid: string, at: number): void {
    this.wrote.set(jid, at);
  }

  read(jid: string, now: number = Date.now()): ContactPresence {
    const at = this.wrote.get(jid);
    if (at === undefined) return { kind: 'contact_presence', jid, presence: 'unknown', last_seen: null, heard_at: null };
    const online = now - at < ONLINE_FOR_MS;
    return { kind: 'contact_presence', jid, presence: online ? 'available' : 'unavailable', last_seen: online ? null : at + ONLINE_FOR_MS, heard_at: now };
  }

  view(): PresenceView {
    return { online: this.online, chats: Object.fromEntries([...this.shownChats].slice(-KEPT)) };
  }
}
