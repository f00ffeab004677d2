import { DisconnectReason } from '@whiskeysockets/baileys';
import type { InstanceStatus } from '../../schemas/records.js';

/** What a session does after its socket closed, from the close's status code. */
export type AfterClose =
  | { readonly kind: 'reconnect'; readonly status: InstanceStatus; readonly reason: string; readonly at: 'once' | 'backoff' }
  | { readonly kind: 'stop'; readonly status: InstanceStatus; readonly reason: string; readonly dropAuth: boolean };

/**
 * The network's close codes (Baileys' `DisconnectReason`, or the HTTP status of a refused
 * upgrade) mapped to our statuses. Logged out and banned stop for good; a connection replaced by
 * another login stops too, because reconnecting would throw that other socket off in turn.
 */
export function afterClose(statusCode: number | undefined): AfterClose {
  switch (statusCode) {
    case DisconnectReason.loggedOut:
      return { kind: 'stop', status: 'logged_out', reason: 'logged out from the phone', dropAuth: true };
    case DisconnectReason.forbidden:
      return { kind: 'stop', status: 'banned', reason: 'the network refused the number', dropAuth: false };
    case DisconnectReason.connectionReplaced:
      return { kind: 'stop', status: 'disconnected', reason: 'another session of this number took over', dropAuth: false };
    case DisconnectReason.restartRequired:
      // Sent once pairing succeeded: the network wants a fresh login with the new credentials.
      return { kind: 'reconnect', status: 'connecting', reason: 'restart after pairing', at: 'once' };
    default:
      return { kind: 'reconnect', status: 'disconnected', reason: `connection closed (${statusCode ?? 'no code'})`, at: 'backoff' };
  }
}
