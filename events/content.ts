import type { ContactContent, DeleteContent, EditContent, InboundMessage, LocationContent, Media, MediaSource, PollContent, ReactionContent, SendCommand } from '../schemas/records.js';
import { maskedOtpBody } from './otp.js';

/**
 * What a message says, as the conversation history stores it (columns of
 * `conversations.messages`) and its public events show it: its type, its public `body`
 * (text, caption, place name, contact name, emoji, poll question or chosen options) and the
 * fields of its type. Media keep their id and metadata only: URLs are signed when read.
 */
export interface ContentColumns {
  readonly type: string;
  readonly body: string | null;
  readonly media_id: string | null;
  readonly media_mime_type: string | null;
  readonly media_filename: string | null;
  readonly media_size: number | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly poll_name: string | null;
  readonly poll_options: readonly string[] | null;
  readonly vote_poll_message_id: string | null;
  readonly vote_selected: readonly string[] | null;
  readonly code_masked: string | null;
}

const nothing = {
  media_id: null,
  media_mime_type: null,
  media_filename: null,
  media_size: null,
  latitude: null,
  longitude: null,
  poll_name: null,
  poll_options: null,
  vote_poll_message_id: null,
  vote_selected: null,
  code_masked: null,
} as const;

function storedMedia(media: Media | null) {
  if (media === null) return {};
  return { media_id: media.id, media_mime_type: media.mime_type, media_filename: media.filename, media_size: media.size };
}

/** Kinds whose record is the same whether we sent it or received it. */
function sharedContent(content: LocationContent | ContactContent | ReactionContent | PollContent | EditContent | DeleteContent): ContentColumns {
  switch (content.kind) {
    case 'edit':
      return { ...nothing, type: 'edit', body: content.body };
    case 'delete':
      return { ...nothing, type: 'delete', body: null };
    case 'location':
      return { ...nothing, type: 'location', body: content.name, latitude: content.latitude, longitude: content.longitude };
    case 'contact':
      return { ...nothing, type: 'contact', body: content.contact_name };
    case 'reaction':
      return { ...nothing, type: 'reaction', body: content.emoji };
    case 'poll':
      return { ...nothing, type: 'poll', body: content.name, poll_name: content.name, poll_options: content.options };
  }
}

export function inboundContent(content: InboundMessage['content']): ContentColumns {
  switch (content.kind) {
    case 'text':
      return { ...nothing, type: 'text', body: content.body };
    case 'image':
    case 'video':
    case 'document':
      return { ...nothing, ...storedMedia(content.media), type: content.kind, body: content.caption };
    case 'audio':
    case 'sticker':
      return { ...nothing, ...storedMedia(content.media), type: content.kind, body: null };
    case 'location':
    case 'contact':
    case 'reaction':
    case 'poll':
    case 'edit':
    case 'delete':
      return sharedContent(content);
    case 'poll_vote':
      return {
        ...nothing,
        type: 'poll_vote',
        body: content.selected.join(', '),
        vote_poll_message_id: content.poll_message_id,
        vote_selected: content.selected,
      };
    case 'view_once':
      // The phone alone could open it: the history and the event say it came, with no content.
      return { ...nothing, type: 'view_once', body: null };
  }
}

/** Our sends. An OTP keeps its context text and the masked code, never the code (spec 4.2). */
export function sendContent(content: SendCommand['content']): ContentColumns {
  switch (content.kind) {
    case 'text':
    case 'buttons':
    case 'list':
      return { ...nothing, type: content.kind, body: content.body };
    case 'image':
    case 'video':
    case 'document':
      return { ...nothing, ...sentMedia(content.media), type: content.kind, body: content.caption };
    case 'audio':
    case 'sticker':
      return { ...nothing, ...sentMedia(content.media), type: content.kind, body: null };
    case 'location':
    case 'contact':
    case 'reaction':
    case 'poll':
    case 'edit':
    case 'delete':
      return sharedContent(content);
    case 'otp':
      return { ...nothing, type: 'otp', body: maskedOtpBody(content.body, content.code_masked), code_masked: content.code_masked };
  }
}

/** A send's media has no id until the connector stores it; the caller's URL is not kept. */
function sentMedia(media: MediaSource) {
  return { media_mime_type: media.mime_type, media_filename: media.filename };
}
