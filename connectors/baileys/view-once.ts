import type { proto } from '@whiskeysockets/baileys';
import type { ViewOnceContent } from '../../schemas/records.js';

const mediaTypes = { imageMessage: 'image', videoMessage: 'video', audioMessage: 'audio' } as const;

/**
 * A view-once photo, video or voice note as a linked device receives it: the network keeps the
 * content for the phone, so the wrapper comes empty, or the media comes flagged `viewOnce` with
 * nothing to download. Such a message becomes a fact that it came, without content; a view-once
 * message that does carry its media is an ordinary one (undefined here).
 */
export function viewOnceWithoutContent(message: proto.IMessage | null | undefined, content: proto.IMessage | undefined): ViewOnceContent | undefined {
  const typed = content === undefined ? undefined : (Object.keys(mediaTypes) as (keyof typeof mediaTypes)[]).find((key) => content[key] != null);
  const media = typed === undefined ? undefined : content![typed]!;
  if (!hasViewOnceWrapper(message) && media?.viewOnce !== true) return undefined;
  if (media === undefined) return isEmpty(content) ? { kind: 'view_once', media_type: null } : undefined;
  const downloadable = (media.mediaKey?.length ?? 0) > 0 && (Boolean(media.directPath) || Boolean(media.url));
  return downloadable ? undefined : { kind: 'view_once', media_type: mediaTypes[typed!] };
}

function hasViewOnceWrapper(message: proto.IMessage | null | undefined): boolean {
  for (let m = message, depth = 0; m && depth < 5; m = m.ephemeralMessage?.message, depth++) {
    if (m.viewOnceMessage || m.viewOnceMessageV2 || m.viewOnceMessageV2Extension) return true;
  }
  return false;
}

/** No content but the keys every message may carry. */
function isEmpty(content: proto.IMessage | undefined): boolean {
  return content === undefined || Object.entries(content).every(([key, value]) => value == null || key === 'messageContextInfo');
}
