import type { AnyMessageContent, BaileysEventMap, CacheStore, GroupMetadata, MiscMessageGenerationOptions, proto, WAMessage, WAMessageKey, WASocket } from '@whiskeysockets/baileys';
import type { InstanceState, SendCommand } from '../../schemas/records.js';
import type { GroupFact, InboundFact, StatusFact } from '../network/connector.js';

/** One network message of a send (an OTP is two). */
export interface OutgoingMessage {
  readonly content: AnyMessageContent;
  readonly options?: MiscMessageGenerationOptions;
  /** The code bubble of an OTP: never stored, so a retry of it cannot be answered from our store. */
  readonly secret?: boolean;
}

/**
 * What a session asks of the rest of the connector: the mapping between Baileys' objects and our
 * facts, and the stores and caches that outlive its socket. Sessions hold none of it themselves.
 */
export interface BaileysMapping {
  inbound(instance: InstanceState, message: WAMessage, socket: WASocket): Promise<InboundFact | null>;
  statuses(updates: BaileysEventMap['messages.update'], receipts: BaileysEventMap['message-receipt.update']): StatusFact[];
  groupEvents(
    instanceId: string,
    own: { readonly jid: string | null; readonly lid: string | null },
    participants: BaileysEventMap['group-participants.update'] | undefined,
    groups: BaileysEventMap['groups.update'] | undefined,
  ): GroupFact[];
  learnLid(instanceId: string, mapping: BaileysEventMap['lid-mapping.update']): void;
  outgoing(command: SendCommand): Promise<readonly OutgoingMessage[]>;
  /** Marks a network id as ours before the message leaves, so its echo is never taken for an inbound message. */
  rememberSending(instanceId: string, waMessageId: string): Promise<void>;
  /** Keeps what was sent (for retries; never an OTP code) and a poll's secret, once the socket took it. */
  rememberSent(instanceId: string, command: SendCommand, message: OutgoingMessage, sent: WAMessage, own: { readonly jid: string | null; readonly lid: string | null }): Promise<void>;
  storedMessage(instanceId: string, key: WAMessageKey): Promise<proto.IMessage | undefined>;
  retryCounters(instanceId: string): CacheStore;
  groupMetadata(instanceId: string, jid: string, socket?: WASocket): Promise<GroupMetadata | undefined>;
  /** The number left this worker for good (logged out, removed): what is kept of it in memory goes. */
  forget(instanceId: string): void;
}
