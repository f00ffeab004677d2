import type { Readable } from 'node:stream';
import {
  downloadMediaMessage,
  isJidGroup,
  jidNormalizedUser,
  extractMessageContent,
  type BaileysEventMap,
  type CacheStore,
  type GroupMetadata,
  type proto,
  type WAMessage,
  type WAMessageKey,
  type WASocket,
} from '@whiskeysockets/baileys';
import type { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import type { InstanceState, Media, MediaSource, SendCommand } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import type { GroupFact, InboundFact, OtpOpener, StatusFact } from '../network/connector.js';
import type { MediaSink } from '../network/media-sink.js';
import { groupFacts } from './group-events.js';
import { mapInbound, type InboundContext, type MediaKind } from './inbound.js';
import type { BaileysMapping, OutgoingMessage } from './mapping.js';
import { outgoingMessages } from './outbound.js';
import { ownJids } from './people.js';
import { PollStore } from './poll-store.js';
import { statusFacts } from './receipts.js';
import { SentMessages } from './sent-messages.js';
import { boundedCache, ttlCache } from './ttl-cache.js';

/** Received media over this size is not downloaded (the message arrives with `media: null`); the send limit of spec 8.3. */
const MEDIA_MAX_BYTES = 64 * 1024 * 1024;
/** A download not done by then is given up: the message arrives with `media: null`. */
const MEDIA_DOWNLOAD_MS = 60_000;
const RETRY_COUNTERS_TTL_MS = 3_600_000;
const GROUP_METADATA_TTL_MS = 300_000;
const LIDS_KEPT = 10_000;
/** Messages a number received lately, kept so a reply can quote them as the network gave them. */
const RECEIVED_KEPT = 500;

export interface BaileysProtocolDeps {
  readonly pool: Pool;
  readonly logger: Logger;
  /** Received media go to the private media store. */
  readonly media: MediaSink;
  /** Media of sends, by the key the API stored them under. */
  readonly mediaOf: (source: MediaSource) => Promise<Readable>;
  readonly otp: OtpOpener;
  /** How long a received media may take to download; 60 s unless a test says otherwise. */
  readonly mediaDownloadMs?: number;
}

/** What the connector keeps per number across its sockets: caches Baileys asks for, and learnt lids. */
interface PerNumber {
  readonly retryCounters: CacheStore;
  readonly groups: CacheStore;
  /** Lid → phone jid, as the network taught this number. */
  readonly lids: LRUCache<string, string>;
  /** Received messages by network id (key and content only), for replies to quote. */
  readonly received: LRUCache<string, WAMessage>;
}

/**
 * The protocol side of the Baileys connector: Baileys' objects to our facts and back, the stores
 * of sent messages and polls (Postgres), and the per-number caches that outlive a socket restart.
 */
export class BaileysProtocol implements BaileysMapping {
  readonly sent: SentMessages;
  readonly polls: PollStore;
  private readonly numbers = new Map<string, PerNumber>();

  constructor(private readonly deps: BaileysProtocolDeps) {
    this.sent = new SentMessages(deps.pool);
    this.polls = new PollStore(deps.pool);
  }

  async inbound(instance: InstanceState, message: WAMessage, socket: WASocket): Promise<InboundFact | null> {
    const id = instance.instance_id;
    const lids = this.of(id).lids;
    // Lids of the message's key the socket already knows: learnt before the mapping asks.
    for (const jid of [message.key.remoteJid, message.key.participant]) {
      if (jid && jid.endsWith('@lid') && lids.get(jidNormalizedUser(jid)) === undefined) {
        const phone = await socket.signalRepository.lidMapping.getPNForLID(jid).catch(() => null);
        if (phone) lids.set(jidNormalizedUser(jid), jidNormalizedUser(phone));
      }
    }
    const ctx: InboundContext = {
      own: { ...ownJids(socket), name: instance.nickname },
      phoneOfLid: (lid) => lids.get(lid),
      isOurSend: (waId) => this.sent.isOurs(id, waId),
      poll: (waId) => this.polls.find(id, waId),
      rememberPoll: (waId, poll) => this.polls.remember(id, waId, poll),
      storeMedia: (received, kind) => this.storeMedia(instance, socket, received, kind),
    };
    const outcome = await mapInbound(message, ctx);
    if (outcome.kind === 'fact' && message.key.id && message.message) this.of(id).received.set(message.key.id, { key: message.key, message: message.message });
    if (outcome.kind === 'skip') {
      this.deps.logger.debug({ instanceId: id, waMessageId: message.key.id, reason: outcome.reason }, 'received message skipped');
      return null;
    }
    return outcome.fact;
  }

  statuses(updates: BaileysEventMap['messages.update'], receipts: BaileysEventMap['message-receipt.update']): StatusFact[] {
    return statusFacts(updates, receipts);
  }

  groupEvents(
    instanceId: string,
    own: { readonly jid: string | null; readonly lid: string | null },
    participants: BaileysEventMap['group-participants.update'] | undefined,
    groups: BaileysEventMap['groups.update'] | undefined,
  ): GroupFact[] {
    const cache = this.of(instanceId);
    for (const jid of [participants?.id, ...(groups ?? []).map((g) => g.id)]) if (jid) void cache.groups.del(jid);
    return groupFacts(own, participants, groups, (lid) => cache.lids.get(lid));
  }

  learnLid(instanceId: string, mapping: BaileysEventMap['lid-mapping.update']): void {
    this.of(instanceId).lids.set(jidNormalizedUser(mapping.lid), jidNormalizedUser(mapping.pn));
  }

  outgoing(command: SendCommand): Promise<readonly OutgoingMessage[]> {
    const id = command.instance_id;
    return outgoingMessages(command, { media: this.deps.mediaOf, otp: this.deps.otp, isOwn: (waId) => this.sent.isOurs(id, waId), quoted: (to, waId) => this.quoted(id, to, waId) });
  }

  /** A message to quote: one the number received lately, else one of its sends still kept (SENT_KEPT_DAYS, tables.ts). */
  private async quoted(instanceId: string, to: string, waMessageId: string): Promise<WAMessage | undefined> {
    const received = this.of(instanceId).received.get(waMessageId);
    if (received !== undefined) return received;
    const sent = await this.sent.get(instanceId, waMessageId);
    return sent === undefined ? undefined : { key: { remoteJid: to, id: waMessageId, fromMe: true }, message: sent };
  }

  rememberSending(instanceId: string, waMessageId: string): Promise<void> {
    return this.sent.remember(instanceId, waMessageId, null);
  }

  async rememberSent(instanceId: string, command: SendCommand, message: OutgoingMessage, sent: WAMessage, own: { readonly jid: string | null; readonly lid: string | null }): Promise<void> {
    const waId = sent.key.id!;
    if (!message.secret && sent.message) await this.sent.remember(instanceId, waId, sent.message);
    const secret = sent.message?.messageContextInfo?.messageSecret;
    if (command.content.kind === 'poll' && secret && own.jid) {
      await this.polls.remember(instanceId, waId, { creatorJid: own.jid, secret, options: command.content.options });
    }
  }

  storedMessage(instanceId: string, key: WAMessageKey): Promise<proto.IMessage | undefined> {
    return key.id ? this.sent.get(instanceId, key.id) : Promise.resolve(undefined);
  }

  retryCounters(instanceId: string): CacheStore {
    return this.of(instanceId).retryCounters;
  }

  /** Baileys reads it before every group send; a miss makes it ask the network, then we keep the answer. */
  async groupMetadata(instanceId: string, jid: string, socket?: WASocket): Promise<GroupMetadata | undefined> {
    const groups = this.of(instanceId).groups;
    const cached = await groups.get<GroupMetadata>(jid);
    if (cached !== undefined || socket === undefined || !isJidGroup(jid)) return cached;
    const fetched = await socket.groupMetadata(jid);
    await groups.set(jid, fetched);
    return fetched;
  }

  /** The number is gone from this worker for good: its caches go too. */
  forget(instanceId: string): void {
    this.numbers.delete(instanceId);
  }

  private of(instanceId: string): PerNumber {
    let found = this.numbers.get(instanceId);
    if (found === undefined) {
      found = {
        retryCounters: ttlCache(RETRY_COUNTERS_TTL_MS, 5_000),
        groups: ttlCache(GROUP_METADATA_TTL_MS, 1_000),
        lids: boundedCache<string>(LIDS_KEPT),
        received: boundedCache<WAMessage>(RECEIVED_KEPT),
      };
      this.numbers.set(instanceId, found);
    }
    return found;
  }

  private async storeMedia(instance: InstanceState, socket: WASocket, message: WAMessage, kind: MediaKind): Promise<Media | null> {
    const inner = extractMessageContent(message.message)?.[`${kind}Message`];
    const size = Number(inner?.fileLength?.toString() ?? 0);
    if (size > MEDIA_MAX_BYTES) return null;
    try {
      // Bounded: the message waits for its media before it is written, and the number's other messages
      // behind it. Baileys' download hands no signal on to its fetch, so the bound is ours.
      const download = downloadMediaMessage(message, 'buffer', {}, { reuploadRequest: socket.updateMediaMessage, logger: socket.logger });
      const bytes = await withDeadline(download, this.deps.mediaDownloadMs ?? MEDIA_DOWNLOAD_MS);
      const filename = kind === 'document' ? (extractMessageContent(message.message)?.documentMessage?.fileName ?? undefined) : undefined;
      return await this.deps.media.store(bytes, inner?.mimetype ?? 'application/octet-stream', filename, {
        accountId: instance.account_id,
        projectId: instance.project_id,
        instanceId: instance.instance_id,
      });
    } catch (err) {
      this.deps.logger.warn({ err, instanceId: instance.instance_id, waMessageId: message.key.id }, 'received media not stored; the message arrives without it');
      return null;
    }
  }
}
