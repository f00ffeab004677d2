import {
  decryptPollVote,
  getContentType,
  isJidGroup,
  isJidStatusBroadcast,
  jidNormalizedUser,
  normalizeMessageContent,
  type proto,
  type WAMessage,
} from '@whiskeysockets/baileys';
import { isGroupJid, phoneOfJid } from '../../schemas/phones.js';
import type { Media, Sender } from '../../schemas/records.js';
import type { InboundFact } from '../network/connector.js';
import { resolveVote } from '../network/polls.js';
import { personOf, type LidLookup } from './people.js';
import type { KnownPoll } from './poll-store.js';

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
const skip = (reason: string): InboundOutcome => ({ kind: 'skip', reason });

/**
 * A message of `messages.upsert` as our inbound fact (spec 2.4): the customer's messages, and the
 * owner's own from the phone (origin external). Wrappers (ephemeral, view once, captioned
 * documents) are opened; lids become phone jids where the number knows them; votes are decrypted
 * and named. Echoes of our sends, protocol messages and status posts are skipped with a reason.
 */
export async function mapInbound(message: WAMessage, ctx: InboundContext): Promise<InboundOutcome> {
  const { key } = message;
  const waId = key.id;
  const remote = key.remoteJid;
  if (!waId || !remote) return skip('no message id or chat');
  if (isJidStatusBroadcast(remote)) return skip('a status post');
  const body = normalizeMessageContent(message.message);
  const type = getContentType(body);
  if (body === undefined || type === undefined) return skip(message.messageStubType ? 'a system notice' : 'no content');
  if (key.fromMe && (await ctx.isOurSend(waId))) return skip('the echo of one of our sends');

  const group = isJidGroup(remote) ? remote : null;
  const author = key.fromMe ? ownSender(ctx) : personOf(group === null ? remote : (key.participant ?? ''), group === null ? key.remoteJidAlt : key.participantAlt, message.pushName, ctx.phoneOfLid);
  const chat = group ?? (key.fromMe ? personOf(remote, key.remoteJidAlt, null, ctx.phoneOfLid).jid : author.jid);
  const context = contextOf(body, type);
  const content = await contentOf(message, body, type, author, ctx);
  if (content === undefined) return skip(`unsupported content ${type}`);
  if ('skip' in content) return skip(content.skip);
  const quotedId = content.kind === 'reaction' ? content.quoted_message_id : (context?.stanzaId ?? null);
  const quotedParticipant = context?.participant ? personOf(context.participant, undefined, null, ctx.phoneOfLid).jid : null;
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

async function contentOf(message: WAMessage, body: proto.IMessage, type: keyof proto.IMessage, author: Sender, ctx: InboundContext): Promise<Content | { skip: string } | undefined> {
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
      return pollOf(message, body, author, ctx);
    case 'pollUpdateMessage':
      return voteOf(message, body.pollUpdateMessage!, author, ctx);
    case 'protocolMessage':
    case 'senderKeyDistributionMessage':
      return { skip: `a ${type}` };
    default:
      return undefined;
  }
}

async function pollOf(message: WAMessage, body: proto.IMessage, author: Sender, ctx: InboundContext): Promise<Content> {
  const poll = body.pollCreationMessage ?? body.pollCreationMessageV2 ?? body.pollCreationMessageV3!;
  const options = (poll.options ?? []).map((option) => option.optionName ?? '');
  const secret = body.messageContextInfo?.messageSecret ?? null;
  // Votes on it can be read only with its secret: kept, whoever created it.
  if (secret && message.key.id) await ctx.rememberPoll(message.key.id, { creatorJid: author.lid ?? author.jid, secret, options });
  return { kind: 'poll', name: poll.name ?? '', options, selectable_count: poll.selectableOptionsCount ?? 0, message_secret: secret ? Buffer.from(secret) : null };
}

/**
 * A vote is encrypted for the jids the voter's and creator's devices saw (phone or lid): each
 * pairing is tried until one opens; the chosen options travel as SHA-256 hashes of their names.
 */
async function voteOf(message: WAMessage, update: proto.Message.IPollUpdateMessage, voter: Sender, ctx: InboundContext): Promise<Content | { skip: string }> {
  const pollId = update.pollCreationMessageKey?.id;
  const vote = update.vote;
  if (!pollId || !vote?.encPayload || !vote.encIv) return { skip: 'a vote without its poll or payload' };
  const poll = await ctx.poll(pollId);
  if (poll === undefined) return { skip: `a vote on an unknown poll ${pollId}` };
  const voters = unique([message.key.fromMe ? ctx.own.jid : null, message.key.fromMe ? ctx.own.lid : null, voter.jid, voter.lid, message.key.participant, message.key.remoteJid].map(normalised));
  const creators = unique([poll.creatorJid, ctx.own.jid, ctx.own.lid].map(normalised));
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
  const seconds = typeof timestamp === 'number' ? timestamp : timestamp == null ? Date.now() / 1000 : Number(timestamp.toString());
  return Math.round(seconds * 1000);
}

function normalised(jid: string | null | undefined): string | null {
  return jid ? jidNormalizedUser(jid) : null;
}

function unique(values: (string | null)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== null && v !== '' && !isGroupJid(v)))];
}
