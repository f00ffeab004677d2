import type { Logger } from 'pino';
import type { InboundMessage, Media, SandboxCustomerMessage, SandboxMediaContent, SandboxMediaType } from '../../schemas/records.js';
import type { MediaOwner, MediaSink } from '../network/media-sink.js';
import { optionHash, resolveVote } from '../network/polls.js';
import type { Recent } from './recent.js';

export type ControlContent = SandboxCustomerMessage['content'];
export type ReceivedContent = InboundMessage['content'];

export interface ContentDeps {
  /** Absent: media messages arrive with media null, as when a download fails. */
  readonly media?: MediaSink;
  /** The number receiving: its account's storage holds the media. */
  readonly owner: MediaOwner;
  /** Options of the polls the number has sent or seen, by wa_message_id. */
  readonly polls: Recent<string, readonly string[]>;
  readonly logger: Logger;
}

const usualMime: Readonly<Record<SandboxMediaType, string>> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg; codecs=opus',
  document: 'application/pdf',
  sticker: 'image/webp',
};

/**
 * What the number receives for simulated content: media stored in the media store, and a vote
 * carried as option hashes (as the network does) and resolved against the poll. Undefined when
 * it cannot be received: a vote on a poll the number does not know.
 */
export async function receivedContent(content: ControlContent, deps: ContentDeps): Promise<ReceivedContent | undefined> {
  switch (content.kind) {
    case 'media':
      return mediaContent(content, await storeMedia(content, deps));
    case 'poll_vote': {
      const options = deps.polls.get(content.poll_message_id);
      if (!options) return undefined;
      return { kind: 'poll_vote', poll_message_id: content.poll_message_id, selected: resolveVote(options, content.selected.map(optionHash)) };
    }
    default:
      return content;
  }
}

async function storeMedia(content: SandboxMediaContent, deps: ContentDeps): Promise<Media | null> {
  if (!deps.media) return null;
  const bytes = content.data ?? Buffer.from(`sandbox ${content.media_type}`);
  try {
    return await deps.media.store(bytes, content.mime_type ?? usualMime[content.media_type], content.filename ?? undefined, deps.owner);
  } catch (err) {
    deps.logger.warn({ err }, 'storing simulated media failed; the message arrives without it');
    return null;
  }
}

function mediaContent(content: SandboxMediaContent, media: Media | null): ReceivedContent {
  switch (content.media_type) {
    case 'image':
    case 'video':
    case 'document':
      return { kind: content.media_type, media, caption: content.caption };
    case 'audio':
      return { kind: 'audio', media, ptt: content.ptt };
    case 'sticker':
      return { kind: 'sticker', media };
  }
}
