import { DisconnectReason } from '@whiskeysockets/baileys';
import type { InstanceStatus } from '../../schemas/records.js';

/** What a session does after its socket closed, from the close's status code. */
export type AfterClose =
  | { readonly kind: 'reconnect'; readonly status: InstanceStatus; readonly reason: string; readonly at: 'once' | 'backoff' | 'slow' }
  | { readonly kind: 'stop'; readonly status: InstanceStatus; readonly reason: string; readonly dropAuth: boolean };

/**
 * The network's close codes (Baileys' `DisconnectReason`) mapped to our statuses and to when the
 * session connects again (docs/baileys.md, "What each close reason does"). Logged out and banned
 * stop for good. `justPaired`: a pairing has just succeeded and its socket not restarted yet.
 */
export function afterClose(statusCode: number | undefined, justPaired: boolean): AfterClose {
  switch (statusCode) {
    case DisconnectReason.loggedOut:
      return { kind: 'stop', status: 'logged_out', reason: 'logged out from the phone', dropAuth: true };
    case DisconnectReason.forbidden:
      return { kind: 'stop', status: 'banned', reason: 'the network refused the number', dropAuth: false };
    case DisconnectReason.connectionReplaced:
      // Retrying at the usual pace would throw the other login off in turn, and it back: one try per longest wait.
      return { kind: 'reconnect', status: 'disconnected', reason: 'another session of this number took over; retrying slowly while this worker holds the number', at: 'slow' };
    case DisconnectReason.restartRequired:
      // Sent once pairing succeeded: the network wants a fresh login with the new credentials. Any later one is a drop like others.
      return justPaired
        ? { kind: 'reconnect', status: 'connecting', reason: 'restart after pairing', at: 'once' }
        : { kind: 'reconnect', status: 'disconnected', reason: 'the network asked for a restart (515)', at: 'backoff' };
    default:
      return { kind: 'reconnect', status: 'disconnected', reason: `connection closed (${statusCode ?? 'no code'})`, at: 'backoff' };
  }
}
