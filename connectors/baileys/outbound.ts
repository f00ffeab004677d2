import type { Readable } from 'node:stream';
import type { AnyMessageContent, WAMessage } from '@whiskeysockets/baileys';
import type { AudioContent, MediaSource, SendCommand } from '../../schemas/records.js';
import type { OtpOpener } from '../network/connector.js';
import { buttonsAsText, listAsText, otpBubbles } from '../network/outgoing-text.js';
import type { OutgoingMessage } from './mapping.js';

export interface OutboundDeps {
  /** The bytes of a send's media, from the media store (the API stored every upload and URL there). */
  readonly media: (source: MediaSource) => Promise<Readable>;
  readonly otp: OtpOpener;
  /** Whether a network id is one of this number's own messages (a reaction's key says so). */
  readonly isOwn: (waMessageId: string) => Promise<boolean>;
  /** A message of the chat `to` as the number knows it (one it received lately, or one of its sends), for a reply to quote. */
  readonly quoted: (to: string, waMessageId: string) => Promise<WAMessage | undefined>;
}

/**
 * An audio, or a voice note with the duration and waveform the API measured when it converted it
 * (given, Baileys computes neither: its waveform needs a decoder this project does not install).
 */
function audioMessage(content: AudioContent, audio: { stream: Readable }): AnyMessageContent {
  // Baileys copies every field it is given into the audioMessage; its type just does not name `waveform`.
  const message: AnyMessageContent & { waveform?: Uint8Array } = {
    audio,
    ptt: content.ptt,
    mimetype: content.media.mime_type ?? undefined,
    ...(content.seconds !== null && { seconds: content.seconds }),
    ...(content.waveform !== null && { waveform: new Uint8Array(content.waveform) }),
  };
  return message;
}

const ownKey = (command: SendCommand, waMessageId: string) => ({ remoteJid: command.to, id: waMessageId, fromMe: true });

/**
 * The network messages of one send, in order: buttons and lists become numbered text (the network
 * gives them to official senders only), an OTP becomes its context text and then a bubble holding
 * only the code, opened here and nowhere else.
 */
export async function outgoingMessages(command: SendCommand, deps: OutboundDeps): Promise<OutgoingMessage[]> {
  const messages = await contentMessages(command, deps);
  const [first, ...rest] = messages;
  if (first === undefined || (command.quoted_message_id === null && command.mentions.length === 0)) return messages;
  return [await asReply(command, first, deps), ...rest];
}

/**
 * The first message of a send as a reply (Baileys' `quoted`: the context's `stanzaId`,
 * `participant` and `quotedMessage`) mentioning people (`mentions`: the context's `mentionedJid`).
 * A quoted message the number no longer knows is quoted by its id alone, from the chat: the
 * recipient's phone shows the reply, with an empty quote.
 */
async function asReply(command: SendCommand, message: OutgoingMessage, deps: OutboundDeps): Promise<OutgoingMessage> {
  const id = command.quoted_message_id;
  const quoted = id === null ? undefined : ((await deps.quoted(command.to, id)) ?? { key: { remoteJid: command.to, id, fromMe: false }, message: { conversation: '' } });
  // Baileys reads `mentions` on every kind of content that has a context.
  const content = command.mentions.length === 0 ? message.content : { ...message.content, mentions: [...command.mentions] };
  return { ...message, content, options: { ...message.options, ...(quoted && { quoted }) } };
}

async function contentMessages(command: SendCommand, deps: OutboundDeps): Promise<OutgoingMessage[]> {
  const { content } = command;
  const one = (message: AnyMessageContent): OutgoingMessage[] => [{ content: message }];
  // A stream, not a Buffer: Baileys encrypts it chunk by chunk to a temporary file, so a 64 MiB send
  // never sits whole in memory.
  const upload = async (source: MediaSource) => ({ stream: await deps.media(source) });
  switch (content.kind) {
    case 'text':
      return one({ text: content.body });
    case 'image':
      return one({ image: await upload(content.media), caption: content.caption ?? undefined, mimetype: content.media.mime_type ?? undefined });
    case 'video':
      return one({ video: await upload(content.media), caption: content.caption ?? undefined, mimetype: content.media.mime_type ?? undefined });
    case 'audio':
      return one(audioMessage(content, await upload(content.media)));
    case 'sticker':
      return one({ sticker: await upload(content.media), isAnimated: content.animated, mimetype: content.media.mime_type ?? undefined });
    case 'document':
      return one({
        document: await upload(content.media),
        mimetype: content.media.mime_type ?? 'application/octet-stream',
        fileName: content.media.filename ?? undefined,
        caption: content.caption ?? undefined,
      });
    case 'location':
      return one({ location: { degreesLatitude: content.latitude, degreesLongitude: content.longitude, name: content.name ?? undefined, address: content.address ?? undefined } });
    case 'contact':
      return one({ contacts: { displayName: content.contact_name, contacts: [{ displayName: content.contact_name, vcard: content.contact_vcard }] } });
    case 'reaction':
      // `to` is always a person's phone jid (never a group), so the key needs no participant. It is
      // ours when the reacted id is one of our sends still kept (SENT_KEPT_DAYS); a message the owner
      // wrote from the phone, or an older send, is taken as the customer's and the reaction may not show.
      return one({
        react: { text: content.emoji, key: { remoteJid: command.to, id: content.quoted_message_id, fromMe: await deps.isOwn(content.quoted_message_id) } },
      });
    case 'poll':
      return one({
        poll: {
          name: content.name,
          values: [...content.options],
          selectableCount: content.selectable_count,
          // Ours, kept with the poll, so the votes can be decrypted whenever they come.
          messageSecret: content.message_secret ?? undefined,
        },
      });
    case 'buttons':
      return one({ text: buttonsAsText(content) });
    case 'list':
      return one({ text: listAsText(content) });
    case 'edit':
      // Only the number's own messages can be edited or deleted for everyone: the key is always ours.
      return one({ text: content.body, edit: ownKey(command, content.quoted_message_id) });
    case 'delete':
      return one({ delete: ownKey(command, content.quoted_message_id) });
    case 'otp': {
      const [context, code] = otpBubbles(content, deps.otp);
      return [{ content: { text: context } }, { content: { text: code }, secret: true }];
    }
  }
}
