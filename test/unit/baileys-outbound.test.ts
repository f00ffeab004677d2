import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { proto } from '@whiskeysockets/baileys';
import { generateWAMessageContent } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { outgoingMessages, type OutboundDeps } from '../../connectors/baileys/outbound.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { MediaSource, SendCommand } from '../../schemas/records.js';

const TO = '5511988887777@s.whatsapp.net';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');

function command(content: SendCommand['content']): SendCommand {
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
  };
}

const opened: string[] = [];
const deps: OutboundDeps = {
  media: async (source: MediaSource) => {
    if (source.media_ref !== 'media/doc.pdf') throw new Error(`no media ${source.media_ref}`);
    return Readable.from([PDF]);
  },
  otp: { open: (sealed) => (opened.push(sealed), sealed === 'sealed-482913' ? '482913' : 'wrong') },
  isOwn: async (id) => id === 'OURS1',
};

/** The protobuf the socket would encrypt and send: Baileys' own generation, the upload to the network faked at its edge. */
async function onTheWire(content: SendCommand['content']): Promise<proto.Message[]> {
  const messages = await outgoingMessages(command(content), deps);
  const uploads: string[] = [];
  return Promise.all(
    messages.map((m) =>
      generateWAMessageContent(m.content, {
        logger: pino({ level: 'silent' }),
        upload: async (_path, { mediaType }) => (uploads.push(mediaType), { mediaUrl: `https://mmg.test/${mediaType}`, directPath: `/v/${mediaType}` }),
      }),
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

  it('sends a poll with our own secret, so its votes can be decrypted later', async () => {
    const secret = randomBytes(32);
    const [message] = await onTheWire({ kind: 'poll', name: 'Sabor?', options: ['Queijo', 'Frango'], selectable_count: 1, message_secret: secret });
    const poll = message!.pollCreationMessage ?? message!.pollCreationMessageV3;
    expect(poll).toMatchObject({ name: 'Sabor?', options: [{ optionName: 'Queijo' }, { optionName: 'Frango' }], selectableOptionsCount: 1 });
    expect(Buffer.from(message!.messageContextInfo!.messageSecret!)).toEqual(secret);
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
  });

  it('fails a send whose media is not in the store', async () => {
    await expect(outgoingMessages(command({ kind: 'image', media: { url: null, media_ref: 'media/gone.jpg', mime_type: 'image/jpeg', filename: null }, caption: null }), deps)).rejects.toThrow(/no media/);
  });
});
