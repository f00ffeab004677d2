import {
  decryptPollVote,
  extractMessageContent,
  getContentType,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  isLidUser,
  jidNormalizedUser,
  proto,
  toNumber,
  type WAMessage,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import { isGroupJid, phoneOfJid } from '../../schemas/phones.js';
import type { Media, Sender } from '../../schemas/records.js';
import type { InboundFact } from '../network/connector.js';
import { resolveVote } from '../network/polls.js';
import { targetOf } from '../network/targets.js';
import { personOf, type LidLookup } from './people.js';
import type { KnownPoll } from './poll-store.js';
import { viewOnceWithoutContent } from './view-once.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** What mapping one received message needs to know of the number and its stores. */
export interface InboundContext {
  /** The number's own phone jid and lid, once it is logged in. */
  readonly own: { readonly jid: string | null; readonly lid: string | null; readonly name: string | null };
  /** The phone jid of a lid, when the number has learnt it. */
  readonly phoneOfLid: LidLookup;
  /** Whether a network id is one of our own sends (its echo is never an inbound message). */
  readonly isOurSend: (waMessageId: string) => Promise<boolean>;
  readonly poll: (waMessageId: string) => Promise<KnownPoll | undefined>;
  readonly rememberPoll: (waMessageId: string, poll: KnownPoll) => Promise<void>;
  /** Downloads and stores a media message; null when that failed (the message is still delivered). */
  readonly storeMedia: (message: WAMessage, kind: MediaKind) => Promise<Media | null>;
}

export type InboundOutcome = { readonly kind: 'fact'; readonly fact: InboundFact } | { readonly kind: 'skip'; readonly reason: string };

type Content = InboundFact['content'];
type Skip = { readonly skip: string };
const skip = (reason: string): InboundOutcome => ({ kind: 'skip', reason });

/**
 * A message of `messages.upsert` as our inbound fact (spec 2.4): the customer's messages, and the
 * owner's own from the phone (origin external). Wrappers (ephemeral, view once, edited, captioned
 * documents, business templates) are opened; lids become phone jids where the number knows them;
 * votes are decrypted and named. Echoes of our sends, protocol messages (edits and deletions
 * among them), status posts and channel posts are skipped with a reason.
 *
 * Reaction and poll-vote keys are read as Baileys' `cleanMessage` leaves them: from our side
 * (`fromMe` true when the reacted message or poll is the number's).
 */
export async function mapInbound(message: WAMessage, ctx: InboundContext): Promise<InboundOutcome> {
  const { key } = message;
  const waId = key.id;
  const remote = key.remoteJid;
  if (!waId || !remote) return skip('no message id or chat');
  if (isJidStatusBroadcast(remote)) return skip('a status post');
  if (isJidNewsletter(remote)) return skip('a channel post');
  const body = extractMessageContent(message.message);
  const type = getContentType(body);
  const viewOnce = viewOnceWithoutContent(message.message, body);
  if (viewOnce === undefined && (body === undefined || type === undefined)) return skip(message.messageStubType ? 'a system notice' : 'no content');
  if (key.fromMe && (await ctx.isOurSend(waId))) return skip('the echo of one of our sends');

  const group = isJidGroup(remote) ? remote : null;
  const author = key.fromMe ? ownSender(ctx) : authorOf(key, message.pushName, ctx.phoneOfLid);
  if (author === undefined) return skip('no author of a group or broadcast message');
  // A customer's broadcast list reaches us as a message of theirs; the owner's own is to the list.
  const chat = group ?? (key.fromMe ? personOf(remote, key.remoteJidAlt, null, ctx.phoneOfLid).jid : author.jid);
  const content = viewOnce ?? (await contentOf(message, body!, type!, author, ctx));
  if ('skip' in content) return skip(content.skip);
  const context = body === undefined || type === undefined ? undefined : contextOf(body, type);
  // The message a reaction, an edit or a deletion is about, by its key as the author's side wrote it.
  const reacted = content.kind === 'reaction' ? body?.reactionMessage?.key : body === undefined ? undefined : changed(content, body, key, author);
  const quotedId = targetOf(content) ?? context?.stanzaId ?? null;
  const quotedParticipant = reacted ? keyAuthor(reacted, ctx) : context?.participant ? personOf(context.participant, undefined, null, ctx.phoneOfLid).jid : null;
  return {
    kind: 'fact',
    fact: {
      occurred_at: secondsToMs(message.messageTimestamp),
      origin: key.fromMe ? 'external' : 'customer',
      wa_message_id: waId,
      chat_jid: chat,
      sender: author,
      from: key.fromMe ? author.jid : chat,
      to: key.fromMe ? chat : null,
      quoted_id: quotedId,
      quoted_participant: quotedId === null ? null : quotedParticipant,
      group: group === null ? null : { jid: group, name: null },
      mentions: (context?.mentionedJid ?? []).map((jid) => personOf(jid, undefined, null, ctx.phoneOfLid).jid),
      content,
    },
  };
}

async function contentOf(message: WAMessage, body: proto.IMessage, type: keyof proto.IMessage, author: Sender, ctx: InboundContext): Promise<Content | Skip> {
  switch (type) {
    case 'conversation':
      return { kind: 'text', body: body.conversation ?? '' };
    case 'extendedTextMessage':
      return { kind: 'text', body: body.extendedTextMessage?.text ?? '' };
    case 'imageMessage':
      return { kind: 'image', media: await ctx.storeMedia(message, 'image'), caption: body.imageMessage?.caption || null };
    case 'videoMessage':
      return { kind: 'video', media: await ctx.storeMedia(message, 'video'), caption: body.videoMessage?.caption || null };
    case 'audioMessage':
      return { kind: 'audio', media: await ctx.storeMedia(message, 'audio'), ptt: body.audioMessage?.ptt === true };
    case 'documentMessage':
      return { kind: 'document', media: await ctx.storeMedia(message, 'document'), caption: body.documentMessage?.caption || null };
    case 'stickerMessage':
      return { kind: 'sticker', media: await ctx.storeMedia(message, 'sticker') };
    case 'locationMessage':
    case 'liveLocationMessage': {
      const place = body.locationMessage ?? body.liveLocationMessage!;
      const named = body.locationMessage;
      return { kind: 'location', latitude: place.degreesLatitude ?? 0, longitude: place.degreesLongitude ?? 0, name: named?.name || null, address: named?.address || null };
    }
    case 'contactMessage':
      return { kind: 'contact', contact_name: body.contactMessage?.displayName ?? '', contact_vcard: body.contactMessage?.vcard ?? '' };
    case 'contactsArrayMessage': {
      const cards = body.contactsArrayMessage?.contacts ?? [];
      const names = cards.map((card) => card.displayName).filter(Boolean);
      return { kind: 'contact', contact_name: body.contactsArrayMessage?.displayName || names.join(', '), contact_vcard: cards.map((card) => card.vcard ?? '').join('\n') };
    }
    case 'reactionMessage': {
      const reacted = body.reactionMessage?.key?.id;
      return reacted ? { kind: 'reaction', quoted_message_id: reacted, emoji: body.reactionMessage?.text ?? '' } : { skip: 'a reaction to no message' };
    }
    case 'pollCreationMessage':
    case 'pollCreationMessageV2':
    case 'pollCreationMessageV3':
    case 'pollCreationMessageV5':
      return pollOf(message, body, body[type]!, author, ctx);
    case 'pollUpdateMessage':
      return voteOf(message, body.pollUpdateMessage!, author, ctx);
    case 'protocolMessage':
      return changeOf(body.protocolMessage!);
    default:
      return { skip: `unsupported content ${type}` };
  }
}

/** An edit or a deletion for everyone (revoke) of an earlier message; other protocol messages are skipped. */
function changeOf(protocol: proto.Message.IProtocolMessage): Content | Skip {
  const target = protocol.key?.id;
  const { Type } = proto.Message.ProtocolMessage;
  if (target && protocol.type === Type.REVOKE) return { kind: 'delete', quoted_message_id: target };
  if (target && protocol.type === Type.MESSAGE_EDIT) {
    const edited = extractMessageContent(protocol.editedMessage);
    const body = edited?.conversation ?? edited?.extendedTextMessage?.text ?? edited?.imageMessage?.caption ?? edited?.videoMessage?.caption ?? edited?.documentMessage?.caption;
    return body == null ? { skip: `an edit of ${target} without text` } : { kind: 'edit', quoted_message_id: target, body };
  }
  const kind = protocol.type;
  return { skip: `a protocol message (${kind == null ? 'no type' : (Type[kind] ?? kind)})` };
}

async function pollOf(message: WAMessage, body: proto.IMessage, poll: proto.Message.IPollCreationMessage, author: Sender, ctx: InboundContext): Promise<Content> {
  const options = (poll.options ?? []).map((option) => option.optionName ?? '');
  // Inside a wrapper (ephemeral, view once) the secret may sit on the inner message or the outer one.
  const secret = body.messageContextInfo?.messageSecret ?? message.message?.messageContextInfo?.messageSecret ?? null;
  // Votes on it can be read only with its secret: kept, whoever created it.
  if (secret && message.key.id) await ctx.rememberPoll(message.key.id, { creatorJid: author.lid ?? author.jid, secret, options });
  return { kind: 'poll', name: poll.name ?? '', options, selectable_count: poll.selectableOptionsCount ?? 0, message_secret: secret ? Buffer.from(secret) : null };
}

/**
 * A vote is encrypted for the jids the voter's device saw for the creator and for itself (phone or
 * lid, depending on the chat's addressing): each pairing is tried until one opens. The chosen
 * options travel as SHA-256 hashes of their names.
 */
async function voteOf(message: WAMessage, update: proto.Message.IPollUpdateMessage, voter: Sender, ctx: InboundContext): Promise<Content | Skip> {
  const creation = update.pollCreationMessageKey;
  const pollId = creation?.id;
  const vote = update.vote;
  if (!creation || !pollId || !vote?.encPayload || !vote.encIv) return { skip: 'a vote without its poll or payload' };
  const poll = await ctx.poll(pollId);
  if (poll === undefined) return { skip: `a vote on an unknown poll ${pollId}` };
  const { key } = message;
  const own = [ctx.own.jid, ctx.own.lid];
  const voters = candidates(ctx, key.fromMe ? own : [voter.jid, voter.lid, key.participant, key.participantAlt, key.remoteJid, key.remoteJidAlt]);
  const creators = candidates(ctx, [poll.creatorJid, creation.fromMe ? null : (creation.participant ?? creation.remoteJid), ...own]);
  for (const creator of creators) {
    for (const voterJid of voters) {
      try {
        const decrypted = decryptPollVote(vote, { pollCreatorJid: creator, pollMsgId: pollId, pollEncKey: poll.secret, voterJid });
        const hashes = (decrypted.selectedOptions ?? []).map((hash) => Buffer.from(hash).toString('hex'));
        return { kind: 'poll_vote', poll_message_id: pollId, selected: resolveVote(poll.options, hashes) };
      } catch {
        // Not the pair of jids it was encrypted for: the next one.
      }
    }
  }
  return { skip: `a vote on ${pollId} that no known jid opens` };
}

/** The author of a customer's message: the chat itself, or the participant in groups and broadcast lists. */
function authorOf(key: WAMessageKey, pushName: string | null | undefined, phoneOfLid: LidLookup): Sender | undefined {
  const shared = isJidGroup(key.remoteJid ?? '') || isJidBroadcast(key.remoteJid ?? '');
  const jid = shared ? key.participant : key.remoteJid;
  // The socket puts the author's other identity on participantAlt in groups, on remoteJidAlt elsewhere.
  return jid ? personOf(jid, key.participantAlt ?? key.remoteJidAlt, pushName, phoneOfLid) : undefined;
}

/**
 * The key of an edited or deleted message, as seen from our side: the author changes their own
 * message, except a group admin deleting someone else's (the key names that participant).
 */
function changed(content: Content, body: proto.IMessage, key: WAMessageKey, author: Sender): proto.IMessageKey | undefined {
  if (content.kind !== 'edit' && content.kind !== 'delete') return undefined;
  const participant = body.protocolMessage?.key?.participant;
  if (participant && participant !== key.participant) return { remoteJid: key.remoteJid, participant, fromMe: false };
  return { remoteJid: key.remoteJid, participant: key.fromMe ? null : author.jid, fromMe: key.fromMe };
}

/** The author of a reacted message, from its key as seen from our side. */
function keyAuthor(key: proto.IMessageKey, ctx: InboundContext): string | null {
  if (key.fromMe) return ctx.own.jid ?? ctx.own.lid;
  const jid = key.participant ?? key.remoteJid;
  return jid && !isGroupJid(jid) ? personOf(jid, undefined, null, ctx.phoneOfLid).jid : null;
}

function ownSender(ctx: InboundContext): Sender {
  const jid = ctx.own.jid ?? ctx.own.lid ?? '';
  return { jid, lid: ctx.own.lid, name: ctx.own.name, phone: phoneOfJid(jid) ?? null };
}

/** The context (reply, mentions) of whatever the message carries. */
function contextOf(body: proto.IMessage, type: keyof proto.IMessage): proto.IContextInfo | undefined {
  const inner = body[type] as { contextInfo?: proto.IContextInfo | null } | string | null | undefined;
  return typeof inner === 'object' && inner !== null ? (inner.contextInfo ?? undefined) : undefined;
}

function secondsToMs(timestamp: WAMessage['messageTimestamp']): number {
  return timestamp == null ? Date.now() : toNumber(timestamp) * 1000;
}

/** Normalised person jids to try, each lid followed by its phone when known; groups left out. */
function candidates(ctx: InboundContext, jids: readonly (string | null | undefined)[]): string[] {
  const found = new Set<string>();
  for (const jid of jids) {
    if (!jid || isGroupJid(jid)) continue;
    const normal = jidNormalizedUser(jid);
    found.add(normal);
    const phone = isLidUser(normal) ? ctx.phoneOfLid(normal) : undefined;
    if (phone) found.add(phone);
  }
  return [...found];
}
