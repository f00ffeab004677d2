import type { IngestDeps } from '../../connectors/media/ingest.js';
import type { MediaOwner } from '../../connectors/media/store.js';
import type { SendCommand } from '../../schemas/records.js';
import { DEFAULT_OTP_LIFETIME_MS, type OtpSealer } from '../../connectors/network/index.js';
import type { Locale } from '../errors.js';
import { ingestSendMedia } from '../media/ingest.js';
import { maskCode, otpContext } from './otp-text.js';
import { isReplying, type AnySendBody, type ReplyingType, type SendBody, type SendType } from './schemas.js';
import { toJid } from '../../schemas/phones.js';

export type SendContent = SendCommand['content'];

export interface ContentDeps {
  /** Where a media object of a request is stored (fetched, decoded, converted), counted against `owner`. */
  readonly media: IngestDeps;
  readonly owner: MediaOwner;
  /** Seals an OTP code under a key of its own, destroyed once the send is done or the code expired. */
  readonly otp: OtpSealer;
  readonly locale: Locale;
}

/** The content record of a send: what the connector needs, with secrets sealed and media stored. */
export async function buildContent(type: SendType, body: AnySendBody, deps: ContentDeps): Promise<SendContent> {
  switch (type) {
    case 'text': {
      const b = body as SendBody<'text'>;
      return { kind: 'text', body: b.body };
    }
    case 'image':
    case 'video':
    case 'document': {
      const b = body as SendBody<'image'>;
      const { caption, ...media } = b.media;
      const { source } = await ingestSendMedia(deps.media, media, deps.owner);
      return { kind: type, media: source, caption: caption ?? null };
    }
    case 'audio': {
      const b = body as SendBody<'audio'>;
      const { ptt, ...media } = b.media;
      if (ptt !== true) {
        const { source } = await ingestSendMedia(deps.media, media, deps.owner);
        return { kind: 'audio', media: source, ptt: false, seconds: null, waveform: null };
      }
      // A voice note is stored as the network plays it: Opus in OGG, measured.
      const { source, playback } = await ingestSendMedia(deps.media, media, deps.owner, 'voice_note');
      return { kind: 'audio', media: source, ptt: true, seconds: playback.seconds, waveform: Buffer.from(playback.waveform) };
    }
    case 'sticker': {
      const b = body as SendBody<'sticker'>;
      const { source, playback } = await ingestSendMedia(deps.media, b.media, deps.owner, 'sticker');
      return { kind: 'sticker', media: source, animated: playback.animated };
    }
    case 'location': {
      const b = body as SendBody<'location'>;
      return { kind: 'location', latitude: b.latitude, longitude: b.longitude, name: b.name ?? null, address: b.address ?? null };
    }
    case 'contact': {
      const b = body as SendBody<'contact'>;
      return { kind: 'contact', contact_name: b.contact_name, contact_vcard: b.contact_vcard ?? vcard(b.contact_name, b.contact_phone) };
    }
    case 'reaction': {
      const b = body as SendBody<'reaction'>;
      return { kind: 'reaction', quoted_message_id: b.quoted_message_id, emoji: b.emoji };
    }
    case 'poll': {
      const b = body as SendBody<'poll'>;
      return { kind: 'poll', name: b.name, options: b.options, selectable_count: b.selectable_count ?? 1, message_secret: null };
    }
    case 'buttons': {
      const b = body as SendBody<'buttons'>;
      return { kind: 'buttons', body: b.body, buttons: b.buttons };
    }
    case 'list': {
      const b = body as SendBody<'list'>;
      return {
        kind: 'list',
        body: b.body,
        sections: b.sections.map((s) => ({ title: s.title ?? null, rows: s.rows.map((r) => ({ id: r.id, title: r.title, description: r.description ?? null })) })),
      };
    }
    case 'edit': {
      const b = body as SendBody<'edit'>;
      return { kind: 'edit', quoted_message_id: b.quoted_message_id, body: b.body };
    }
    case 'delete': {
      const b = body as SendBody<'delete'>;
      return { kind: 'delete', quoted_message_id: b.quoted_message_id };
    }
    case 'otp': {
      const b = body as SendBody<'otp'>;
      return {
        kind: 'otp',
        code_masked: maskCode(b.code),
        code_ciphertext: await deps.otp.seal(b.code, b.expiry_minutes === undefined ? DEFAULT_OTP_LIFETIME_MS : b.expiry_minutes * 60_000),
        expiry_minutes: b.expiry_minutes ?? null,
        body: b.body ?? otpContext(deps.locale, b.expiry_minutes),
      };
    }
  }
}

/** The message a send replies to and the jids it mentions, when its type takes them. */
export function replyOf(type: SendType, body: AnySendBody): Pick<SendCommand, 'quoted_message_id' | 'mentions'> {
  // A reaction, an edit and a deletion name their message in their content: no reply of their own.
  if (!isReplying(type)) return { quoted_message_id: null, mentions: [] };
  const b = body as SendBody<ReplyingType>;
  return { quoted_message_id: b.quoted_message_id ?? null, mentions: (b.mentions ?? []).map(toJid) };
}

/** A vCard 3.0 from a name and, when given, a phone. */
export function vcard(name: string, phone: string | undefined): string {
  const escaped = name.replace(/([\\,;])/g, '\\$1').replace(/\n/g, '\\n');
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escaped}`, `N:${escaped};;;;`];
  if (phone) lines.push(`TEL;type=CELL;waid=${phone.slice(1)}:${phone}`);
  lines.push('END:VCARD');
  return lines.join('\n');
}
