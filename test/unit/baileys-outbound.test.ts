import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { generateWAMessage, proto } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { outgoingMessages, type OutboundDeps } from '../../connectors/baileys/outbound.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { MediaSource, SendCommand } from '../../schemas/records.js';

const TO = '5511988887777@s.whatsapp.net';
const OWN_JID = '5511900000000@s.whatsapp.net';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
/** The bytes in the media store, by key: what each media send must put on the network. */
const STORED = new Map<string, Buffer>([
  ['media/doc.pdf', PDF],
  ['media/pic.png', Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex')],
  ['media/clip.mp4', Buffer.concat([Buffer.from('000000186674797069736f6d', 'hex'), randomBytes(64)])],
  ['media/voice.ogg', Buffer.concat([Buffer.from('OggS'), randomBytes(64)])],
  ['media/sticker.webp', Buffer.concat([Buffer.from('RIFF'), randomBytes(4), Buffer.from('WEBP'), randomBytes(32)])],
]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest();
const stored = (ref: string, mime: string | null): MediaSource => ({ url: null, media_ref: ref, mime_type: mime, filename: null });

function command(content: SendCommand['content'], reply: Pick<SendCommand, 'quoted_message_id' | 'mentions'> = { quoted_message_id: null, mentions: [] }): SendCommand {
  return {
    event_id: asEventId('evt_out'),
    occurred_at: 0,
    account_id: asAccountId('acc_out'),
    project_id: asProjectId('prj_out'),
    instance_id: asInstanceId('inst_out'),
    message_id: asMessageId('msg_out'),
    client_reference: null,
    to: TO,
    origin: 'api',
    campaign_id: null,
    idempotency_key_hash: null,
    expires_at: null,
    content,
    ...reply,
  };
}

const opened: string[] = [];
const deps: OutboundDeps = {
  media: async (source: MediaSource) => {
    const bytes = source.media_ref === null ? undefined : STORED.get(source.media_ref);
    if (bytes === undefined) throw new Error(`no media ${source.media_ref}`);
    return Readable.from([bytes]);
  },
  otp: { open: (sealed) => (opened.push(sealed), sealed === 'sealed-482913' ? '482913' : 'wrong') },
  isOwn: async (id) => id === 'OURS1',
  quoted: async (to, id) => (id === 'HERS1' ? { key: { remoteJid: to, id, fromMe: false }, message: { conversation: 'Quero 2 pães' } } : undefined),
};

/** The protobuf the socket would encrypt and send: Baileys' own generation, the upload to the network faked at its edge. */
async function onTheWire(content: SendCommand['content'], reply?: Pick<SendCommand, 'quoted_message_id' | 'mentions'>): Promise<proto.Message[]> {
  const messages = await outgoingMessages(command(content, reply), deps);
  const uploads: string[] = [];
  return Promise.all(
    messages.map(async (m) =>
      (await generateWAMessage(TO, m.content, {
        logger: pino({ level: 'silent' }),
        userJid: OWN_JID,
        upload: async (_path, { mediaType }) => (uploads.push(mediaType), { mediaUrl: `https://mmg.test/${mediaType}`, directPath: `/v/${mediaType}` }),
        ...m.options,
      })).message as proto.Message,
    ),
  );
}

describe('sends as Baileys messages (the protobuf Baileys generates from them)', () => {
  it('sends a text', async () => {
    const [message] = await onTheWire({ kind: 'text', body: 'Olá, Ana' });
    expect(message!.extendedTextMessage?.text ?? message!.conversation).toBe('Olá, Ana');
  });

  it('sends a document from the media store with its name, type and caption', async () => {
    const [message] = await onTheWire({ kind: 'document', media: { url: null, media_ref: 'media/doc.pdf', mime_type: 'application/pdf', filename: 'nota.pdf' }, caption: 'Sua nota' });
    expect(message!.documentMessage).toMatchObject({ fileName: 'nota.pdf', mimetype: 'application/pdf', caption: 'Sua nota', directPath: '/v/document' });
    expect(Number(message!.documentMessage!.fileLength)).toBe(PDF.length);
  });

  it('sends an image, a video and a sticker with the stored bytes, type and caption', async () => {
    const [image] = await onTheWire({ kind: 'image', media: stored('media/pic.png', 'image/png'), caption: 'Vitrine' });
    expect(image!.imageMessage).toMatchObject({ mimetype: 'image/png', caption: 'Vitrine', directPath: '/v/image' });
    expect(Buffer.from(image!.imageMessage!.fileSha256!)).toEqual(sha256(STORED.get('media/pic.png')!));

    const [video] = await onTheWire({ kind: 'video', media: stored('media/clip.mp4', 'video/mp4'), caption: null });
    expect(video!.videoMessage).toMatchObject({ mimetype: 'video/mp4', directPath: '/v/video' });
    expect(video!.videoMessage!.caption ?? '').toBe('');
    expect(Buffer.from(video!.videoMessage!.fileSha256!)).toEqual(sha256(STORED.get('media/clip.mp4')!));

    const [sticker] = await onTheWire({ kind: 'sticker', media: stored('media/sticker.webp', 'image/webp'), animated: false });
    expect(sticker!.stickerMessage).toMatchObject({ mimetype: 'image/webp', directPath: '/v/sticker' });
    expect(sticker!.stickerMessage!.isAnimated ?? false).toBe(false);
    expect(Number(sticker!.stickerMessage!.fileLength)).toBe(STORED.get('media/sticker.webp')!.length);
  });

  it('sends a voice note with the duration and waveform the API measured, and a plain audio without them', async () => {
    const waveform = Buffer.from(Array.from({ length: 64 }, (_, i) => Math.floor((100 * i) / 63)));
    const [voice] = await onTheWire({ kind: 'audio', media: stored('media/voice.ogg', 'audio/ogg; codecs=opus'), ptt: true, seconds: 7, waveform });
    expect(voice!.audioMessage).toMatchObject({ ptt: true, seconds: 7, mimetype: 'audio/ogg; codecs=opus', directPath: '/v/audio' });
    expect(Buffer.from(voice!.audioMessage!.waveform!)).toEqual(waveform);
    expect(Buffer.from(voice!.audioMessage!.fileSha256!)).toEqual(sha256(STORED.get('media/voice.ogg')!));
    // What the recipient's phone decodes: the fields survive the protobuf's encoding.
    const decoded = proto.Message.decode(proto.Message.encode(voice!).finish()).audioMessage!;
    expect({ ptt: decoded.ptt, seconds: decoded.seconds, waveform: Buffer.from(decoded.waveform!) }).toEqual({ ptt: true, seconds: 7, waveform });

    const [audio] = await onTheWire({ kind: 'audio', media: stored('media/voice.ogg', null), ptt: false, seconds: null, waveform: null });
    expect(audio!.audioMessage!.ptt ?? false).toBe(false);
    expect(audio!.audioMessage!.waveform ?? null).toBe(null);
  });

  it('sends an animated sticker as animated', async () => {
    const [sticker] = await onTheWire({ kind: 'sticker', media: stored('media/sticker.webp', 'image/webp'), animated: true });
    expect(sticker!.stickerMessage).toMatchObject({ mimetype: 'image/webp', isAnimated: true });
  });

  it('sends a location and a contact card', async () => {
    const [place] = await onTheWire({ kind: 'location', latitude: -23.5, longitude: -46.6, name: 'Loja', address: 'Rua A, 1' });
    expect(place!.locationMessage).toMatchObject({ degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Loja', address: 'Rua A, 1' });
    const vcard = 'BEGIN:VCARD\nVERSION:3.0\nFN:Caio\nTEL:+5511977776666\nEND:VCARD';
    const [card] = await onTheWire({ kind: 'contact', contact_name: 'Caio', contact_vcard: vcard });
    expect(card!.contactMessage).toMatchObject({ displayName: 'Caio', vcard });
  });

  it('reacts to our own message and to the customer’s with the right key', async () => {
    const [ours] = await onTheWire({ kind: 'reaction', quoted_message_id: 'OURS1', emoji: '❤️' });
    expect(ours!.reactionMessage).toMatchObject({ text: '❤️', key: { remoteJid: TO, id: 'OURS1', fromMe: true } });
    const [theirs] = await onTheWire({ kind: 'reaction', quoted_message_id: 'THEIRS1', emoji: '' });
    expect(theirs!.reactionMessage).toMatchObject({ text: '', key: { remoteJid: TO, id: 'THEIRS1', fromMe: false } });
  });

  it('replies quoting the message as the number knows it, mentioning people, on the first message of a send', async () => {
    const mentioned = ['5511977776666@s.whatsapp.net', '123456789012345@lid'];
    const [text] = await onTheWire({ kind: 'text', body: 'Separados!' }, { quoted_message_id: 'HERS1', mentions: mentioned });
    expect(text!.extendedTextMessage).toMatchObject({
      text: 'Separados!',
      contextInfo: { stanzaId: 'HERS1', participant: TO, quotedMessage: { conversation: 'Quero 2 pães' }, mentionedJid: mentioned },
    });
    // Media carry the context too; a message the number no longer knows is quoted by its id, with an empty quote.
    const [image] = await onTheWire({ kind: 'image', media: stored('media/pic.png', 'image/png'), caption: 'Aqui' }, { quoted_message_id: 'OLD1', mentions: [] });
    expect(image!.imageMessage!.contextInfo).toMatchObject({ stanzaId: 'OLD1', participant: TO, quotedMessage: { conversation: '' } });
    const [plain] = await onTheWire({ kind: 'text', body: 'Oi' });
    expect(plain!.extendedTextMessage?.contextInfo ?? null).toBe(null);
    // An OTP code bubble never quotes nor mentions: only the first message of a send does.
    const otp = await outgoingMessages(command({ kind: 'otp', code_masked: '••13', code_ciphertext: 'sealed-482913', expiry_minutes: null, body: 'Seu código' }, { quoted_message_id: 'HERS1', mentions: mentioned }), deps);
    expect(otp.map((m) => m.options?.quoted?.key.id ?? null)).toEqual(['HERS1', null]);
  });

  it("edits and deletes the number's own message: a MESSAGE_EDIT with the new text, a REVOKE, both keyed fromMe", async () => {
    const { Type } = proto.Message.ProtocolMessage;
    const [edit] = await onTheWire({ kind: 'edit', quoted_message_id: 'OURS1', body: 'Entrega amanhã' });
    const edited = edit!.protocolMessage!;
    expect(edited).toMatchObject({ type: Type.MESSAGE_EDIT, key: { remoteJid: TO, id: 'OURS1', fromMe: true } });
    expect(edited.editedMessage?.extendedTextMessage?.text ?? edited.editedMessage?.conversation).toBe('Entrega amanhã');
    const [removal] = await onTheWire({ kind: 'delete', quoted_message_id: 'OURS2' });
    expect(removal!.protocolMessage).toMatchObject({ type: Type.REVOKE, key: { remoteJid: TO, id: 'OURS2', fromMe: true } });
  });

  it('sends a poll with our own secret, so its votes can be decrypted later', async () => {
    const secret = randomBytes(32);
    const [message] = await onTheWire({ kind: 'poll', name: 'Sabor?', options: ['Queijo', 'Frango'], selectable_count: 1, message_secret: secret });
    const poll = message!.pollCreationMessage ?? message!.pollCreationMessageV3;
    expect(poll).toMatchObject({ name: 'Sabor?', options: [{ optionName: 'Queijo' }, { optionName: 'Frango' }], selectableOptionsCount: 1 });
    expect(Buffer.from(message!.messageContextInfo!.messageSecret!)).toEqual(secret);
    const [any] = await onTheWire({ kind: 'poll', name: 'Quais?', options: ['A', 'B', 'C'], selectable_count: 0, message_secret: secret });
    expect((any!.pollCreationMessage ?? any!.pollCreationMessageV3)!.selectableOptionsCount ?? 0).toBe(0);
  });

  it('sends buttons and lists as numbered text', async () => {
    const [buttons] = await onTheWire({ kind: 'buttons', body: 'Escolha:', buttons: [{ id: 'a', title: 'Pix' }, { id: 'b', title: 'Cartão' }] });
    expect(buttons!.extendedTextMessage?.text ?? buttons!.conversation).toBe('Escolha:\n\n1. Pix\n2. Cartão');
    const [list] = await onTheWire({
      kind: 'list',
      body: 'Cardápio',
      sections: [
        { title: 'Salgados', rows: [{ id: 'c', title: 'Coxinha', description: 'frango' }] },
        { title: 'Doces', rows: [{ id: 'd', title: 'Brigadeiro', description: null }] },
      ],
    });
    expect(list!.extendedTextMessage?.text ?? list!.conversation).toBe('Cardápio\n\nSalgados\n1. Coxinha - frango\n\nDoces\n2. Brigadeiro');
  });

  it('sends an OTP as two messages: the context, then a bubble holding only the code (not kept)', async () => {
    const content = { kind: 'otp', code_masked: '••••13', code_ciphertext: 'sealed-482913', expiry_minutes: 5, body: 'Seu código da Padaria vale 5 minutos.' } as const;
    const messages = await outgoingMessages(command(content), deps);
    expect(messages.map((m) => [m.content, m.secret ?? false])).toEqual([
      [{ text: 'Seu código da Padaria vale 5 minutos.' }, false],
      [{ text: '482913' }, true],
    ]);
    expect(JSON.stringify(messages[0])).not.toContain('482913');
    expect(opened).toContain('sealed-482913');
    const [context, code] = await onTheWire(content);
    expect(context!.extendedTextMessage?.text ?? context!.conversation).toBe('Seu código da Padaria vale 5 minutos.');
    expect(Buffer.from(proto.Message.encode(context!).finish()).includes('482913')).toBe(false);
    expect(code!.extendedTextMessage?.text ?? code!.conversation).toBe('482913');
  });

  it('opens no OTP code for any other send', async () => {
    opened.length = 0;
    await onTheWire({ kind: 'text', body: 'sealed-482913' });
    await onTheWire({ kind: 'buttons', body: 'Escolha:', buttons: [{ id: 'a', title: 'Pix' }] });
    expect(opened).toEqual([]);
  });

  it('fails a send whose media is not in the store', async () => {
    await expect(outgoingMessages(command({ kind: 'image', media: { url: null, media_ref: 'media/gone.jpg', mime_type: 'image/jpeg', filename: null }, caption: null }), deps)).rejects.toThrow(/no media/);
  });
});
