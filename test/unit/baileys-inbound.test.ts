import { randomBytes } from 'node:crypto';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { mapInbound, type InboundContext, type InboundOutcome, type MediaKind } from '../../connectors/baileys/inbound.js';
import type { KnownPoll } from '../../connectors/baileys/poll-store.js';
import type { InboundFact } from '../../connectors/network/connector.js';
import { phoneOfJid } from '../../schemas/phones.js';
import type { Media } from '../../schemas/records.js';
import { encryptVote } from '../support/poll-vote.js';

const OWN = { jid: '5511900000000@s.whatsapp.net', lid: '900000000000001@lid', name: 'Padaria' };
const ANA = '5511988887777@s.whatsapp.net';
const ANA_LID = '123456789012345@lid';
const BRUNO = '5511966665555@s.whatsapp.net';
const BRUNO_LID = '555555555555555@lid';
const GROUP = '120363040000000000@g.us';
const SENT_AT = 1_764_000_000;
const KEY = Buffer.alloc(32, 7);

type Alt = { remoteJidAlt?: string; participantAlt?: string };

/**
 * A message as the socket hands it over: built with Baileys' protobuf classes and decoded from its
 * bytes; the alternate jids are not protobuf fields, the socket sets them on the decoded key.
 */
function received(object: Record<string, unknown>, alt: Alt = {}): WAMessage {
  const bytes = proto.WebMessageInfo.encode(proto.WebMessageInfo.fromObject({ messageTimestamp: SENT_AT, ...object })).finish();
  const message = proto.WebMessageInfo.decode(bytes) as WAMessage;
  Object.assign(message.key, alt);
  return message;
}

/** A customer's message in a chat (`remoteJid`), optionally by a group participant. */
function from(remoteJid: string, id: string, message: Record<string, unknown>, extra: { participant?: string; fromMe?: boolean; pushName?: string } & Alt = {}): WAMessage {
  const { participant, fromMe = false, pushName, ...alt } = extra;
  return received({ key: { remoteJid, fromMe, id, participant }, pushName, message }, alt);
}

const mediaOf = (waId: string): Media => ({ id: `media-${waId}`, mime_type: 'image/jpeg', filename: null, size: 3, storage_key: `k/${waId}`, sha256: 'ab' });

function context(overrides: Partial<InboundContext> = {}) {
  const polls = new Map<string, KnownPoll>();
  const ourSends = new Set<string>();
  const stored: { kind: MediaKind; id: string }[] = [];
  const ctx: InboundContext = {
    own: OWN,
    phoneOfLid: (lid) => (lid === ANA_LID ? ANA : undefined),
    isOurSend: async (id) => ourSends.has(id),
    poll: async (id) => polls.get(id),
    rememberPoll: async (id, poll) => void polls.set(id, poll),
    storeMedia: async (message, kind) => {
      stored.push({ kind, id: message.key.id! });
      return mediaOf(message.key.id!);
    },
    ...overrides,
  };
  return { ctx, polls, ourSends, stored };
}

async function fact(message: WAMessage, ctx: InboundContext): Promise<InboundFact> {
  const outcome = await mapInbound(message, ctx);
  if (outcome.kind !== 'fact') throw new Error(`skipped: ${outcome.reason}`);
  return outcome.fact;
}

async function skipped(message: WAMessage, ctx: InboundContext): Promise<string> {
  const outcome: InboundOutcome = await mapInbound(message, ctx);
  if (outcome.kind !== 'skip') throw new Error(`mapped: ${JSON.stringify(outcome.fact.content)}`);
  return outcome.reason;
}

describe('Baileys messages mapped to inbound facts (real protocol objects)', () => {
  it('maps a text from a customer: chat, sender with push name, time in ms', async () => {
    const { ctx } = context();
    const out = await fact(from(ANA, 'W1', { conversation: 'Olá' }, { pushName: 'Ana' }), ctx);
    expect(out).toEqual({
      origin: 'customer',
      wa_message_id: 'W1',
      chat_jid: ANA,
      from: ANA,
      to: null,
      sender: { jid: ANA, lid: null, name: 'Ana', phone: phoneOfJid(ANA) },
      content: { kind: 'text', body: 'Olá' },
      occurred_at: SENT_AT * 1000,
      group: null,
      quoted_id: null,
      quoted_participant: null,
      mentions: [],
    });
  });

  it('maps a reply with mentions (extendedTextMessage with contextInfo), lids resolved', async () => {
    const { ctx } = context();
    const reply = from(ANA, 'W2', { extendedTextMessage: { text: 'sim @5511900000000', contextInfo: { stanzaId: 'OUR1', participant: OWN.jid, mentionedJid: [OWN.jid, ANA_LID, BRUNO_LID] } } });
    const out = await fact(reply, ctx);
    expect(out.content).toEqual({ kind: 'text', body: 'sim @5511900000000' });
    expect(out).toMatchObject({ quoted_id: 'OUR1', quoted_participant: OWN.jid, mentions: [OWN.jid, ANA, BRUNO_LID] });
    const toLid = await fact(from(GROUP, 'W3', { imageMessage: { caption: 'isto', contextInfo: { stanzaId: 'ANA1', participant: ANA_LID } } }, { participant: BRUNO }), ctx);
    expect(toLid).toMatchObject({ quoted_id: 'ANA1', quoted_participant: ANA });
  });

  for (const [what, kind, body, expected] of [
    ['an image', 'image', { imageMessage: { caption: 'foto', mimetype: 'image/jpeg', fileLength: 3 } }, { kind: 'image', caption: 'foto' }],
    ['a video without caption', 'video', { videoMessage: { caption: '', mimetype: 'video/mp4' } }, { kind: 'video', caption: null }],
    ['a voice note', 'audio', { audioMessage: { ptt: true, mimetype: 'audio/ogg; codecs=opus' } }, { kind: 'audio', ptt: true }],
    ['an audio file', 'audio', { audioMessage: { mimetype: 'audio/mpeg' } }, { kind: 'audio', ptt: false }],
    ['a document', 'document', { documentMessage: { fileName: 'nota.pdf', caption: 'segue', mimetype: 'application/pdf' } }, { kind: 'document', caption: 'segue' }],
    ['a sticker', 'sticker', { stickerMessage: { mimetype: 'image/webp' } }, { kind: 'sticker' }],
  ] as const) {
    it(`maps ${what} and has its media stored as ${kind}`, async () => {
      const { ctx, stored } = context();
      const id = `M-${what.replaceAll(' ', '-')}`;
      const out = await fact(from(ANA, id, body), ctx);
      expect(out.content).toEqual({ ...expected, media: mediaOf(id) });
      expect(stored).toEqual([{ kind, id }]);
    });
  }

  it('delivers a media message whose download failed, with media null', async () => {
    const { ctx } = context({ storeMedia: async () => null });
    const out = await fact(from(ANA, 'M-lost', { imageMessage: { caption: 'x' } }), ctx);
    expect(out.content).toEqual({ kind: 'image', media: null, caption: 'x' });
  });

  it('opens wrappers: ephemeral, view once (both versions), a document with caption, a business template', async () => {
    const { ctx, stored } = context();
    const ephemeral = await fact(from(ANA, 'E1', { ephemeralMessage: { message: { extendedTextMessage: { text: 'some', contextInfo: { stanzaId: 'Q' } } } } }), ctx);
    expect(ephemeral).toMatchObject({ quoted_id: 'Q', content: { kind: 'text', body: 'some' } });
    const viewOnce = await fact(from(ANA, 'E2', { viewOnceMessage: { message: { videoMessage: { caption: 'uma vez', mediaKey: KEY, directPath: '/v/1' } } } }), ctx);
    expect(viewOnce.content).toMatchObject({ kind: 'video', caption: 'uma vez' });
    const viewOnce2 = await fact(from(ANA, 'E3', { viewOnceMessageV2: { message: { imageMessage: { caption: 'de novo', viewOnce: true, mediaKey: KEY, directPath: '/i/1' } } } }), ctx);
    expect(viewOnce2.content).toMatchObject({ kind: 'image', caption: 'de novo' });
    const captioned = await fact(from(ANA, 'E4', { documentWithCaptionMessage: { message: { documentMessage: { fileName: 'a.pdf', caption: 'doc' } } } }), ctx);
    expect(captioned.content).toMatchObject({ kind: 'document', caption: 'doc' });
    const template = await fact(from(ANA, 'E5', { buttonsMessage: { contentText: 'Escolha uma opção', buttons: [{ buttonId: 'a', buttonText: { displayText: 'A' } }] } }), ctx);
    expect(template.content).toEqual({ kind: 'text', body: 'Escolha uma opção' });
    expect(stored.map((s) => s.kind)).toEqual(['video', 'image', 'document']);
  });

  it('keeps a view-once message the network kept for the phone as a fact without content', async () => {
    const { ctx, stored } = context();
    const empty = await fact(from(ANA, 'V1', { viewOnceMessageV2: { message: {} } }), ctx);
    expect(empty).toMatchObject({ wa_message_id: 'V1', from: ANA, content: { kind: 'view_once', media_type: null } });
    const hollow = await fact(from(ANA, 'V2', { viewOnceMessageV2Extension: { message: { audioMessage: { viewOnce: true, ptt: true } } } }), ctx);
    expect(hollow.content).toEqual({ kind: 'view_once', media_type: 'audio' });
    const flagged = await fact(from(ANA, 'V3', { ephemeralMessage: { message: { imageMessage: { viewOnce: true } } } }), ctx);
    expect(flagged.content).toEqual({ kind: 'view_once', media_type: 'image' });
    expect(stored).toEqual([]);
  });

  it('maps location, live location, a contact and a contacts array (vCards concatenated)', async () => {
    const { ctx } = context();
    const place = await fact(from(ANA, 'L1', { locationMessage: { degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Loja', address: 'Rua A, 1' } }), ctx);
    expect(place.content).toEqual({ kind: 'location', latitude: -23.5, longitude: -46.6, name: 'Loja', address: 'Rua A, 1' });
    const live = await fact(from(ANA, 'L2', { liveLocationMessage: { degreesLatitude: -22.9, degreesLongitude: -43.2, caption: 'indo' } }), ctx);
    expect(live.content).toEqual({ kind: 'location', latitude: -22.9, longitude: -43.2, name: null, address: null });
    const caio = 'BEGIN:VCARD\nVERSION:3.0\nFN:Caio\nTEL:+5511977776666\nEND:VCARD';
    const dora = 'BEGIN:VCARD\nFN:Dora\nEND:VCARD';
    const contact = await fact(from(ANA, 'C1', { contactMessage: { displayName: 'Caio', vcard: caio } }), ctx);
    expect(contact.content).toEqual({ kind: 'contact', contact_name: 'Caio', contact_vcard: caio });
    const many = await fact(from(ANA, 'C2', { contactsArrayMessage: { contacts: [{ displayName: 'Caio', vcard: caio }, { displayName: 'Dora', vcard: dora }] } }), ctx);
    expect(many.content).toEqual({ kind: 'contact', contact_name: 'Caio, Dora', contact_vcard: `${caio}\n${dora}` });
    const named = await fact(from(ANA, 'C3', { contactsArrayMessage: { displayName: '2 contatos', contacts: [{ displayName: 'Caio', vcard: caio }, { displayName: 'Dora', vcard: dora }] } }), ctx);
    expect(named.content).toMatchObject({ contact_name: '2 contatos' });
  });

  it('maps a reaction (and its removal): the reacted message is quoted_id, its author quoted_participant', async () => {
    const { ctx } = context();
    const reacted = await fact(from(ANA, 'R1', { reactionMessage: { key: { remoteJid: ANA, fromMe: true, id: 'OUR2' }, text: '👍' } }), ctx);
    expect(reacted).toMatchObject({ quoted_id: 'OUR2', quoted_participant: OWN.jid, content: { kind: 'reaction', quoted_message_id: 'OUR2', emoji: '👍' } });
    const removed = await fact(from(ANA, 'R2', { reactionMessage: { key: { remoteJid: ANA, fromMe: true, id: 'OUR2' }, text: '' } }), ctx);
    expect(removed.content).toEqual({ kind: 'reaction', quoted_message_id: 'OUR2', emoji: '' });
    const inGroup = await fact(from(GROUP, 'R3', { reactionMessage: { key: { remoteJid: GROUP, fromMe: false, participant: ANA_LID, id: 'ANA2' }, text: '❤️' } }, { participant: BRUNO }), ctx);
    expect(inGroup).toMatchObject({ quoted_id: 'ANA2', quoted_participant: ANA, sender: { jid: BRUNO } });
  });

  it('resolves a lid sender to the phone (lid mapping or the alternate jid), and keeps an unknown lid as is', async () => {
    const { ctx } = context();
    const known = await fact(from(ANA_LID, 'LID1', { conversation: 'a' }), ctx);
    expect(known).toMatchObject({ chat_jid: ANA, from: ANA, sender: { jid: ANA, lid: ANA_LID, phone: phoneOfJid(ANA) } });
    const viaAlt = await fact(from(BRUNO_LID, 'LID2', { conversation: 'b' }, { remoteJidAlt: BRUNO }), ctx);
    expect(viaAlt).toMatchObject({ chat_jid: BRUNO, sender: { jid: BRUNO, lid: BRUNO_LID, phone: phoneOfJid(BRUNO) } });
    const phoneWithLid = await fact(from(BRUNO, 'LID3', { conversation: 'c' }, { remoteJidAlt: BRUNO_LID }), ctx);
    expect(phoneWithLid).toMatchObject({ chat_jid: BRUNO, sender: { jid: BRUNO, lid: BRUNO_LID } });
    const unknown = await fact(from(BRUNO_LID, 'LID4', { conversation: 'd' }), ctx);
    expect(unknown).toMatchObject({ chat_jid: BRUNO_LID, from: BRUNO_LID, sender: { jid: BRUNO_LID, lid: BRUNO_LID, phone: null } });
  });

  it('maps a group message: the chat is the group, the sender its participant (lid resolved by mapping or participantAlt)', async () => {
    const { ctx } = context();
    const out = await fact(from(GROUP, 'G1', { conversation: 'oi grupo' }, { participant: ANA_LID, pushName: 'Ana' }), ctx);
    expect(out).toMatchObject({ chat_jid: GROUP, from: GROUP, to: null, group: { jid: GROUP, name: null }, sender: { jid: ANA, lid: ANA_LID, name: 'Ana' } });
    const viaAlt = await fact(from(GROUP, 'G2', { conversation: 'eu' }, { participant: BRUNO_LID, participantAlt: BRUNO }), ctx);
    expect(viaAlt).toMatchObject({ chat_jid: GROUP, sender: { jid: BRUNO, lid: BRUNO_LID, phone: phoneOfJid(BRUNO) } });
    // A member's first message comes in two encrypted parts, the sender key first; the socket merges them.
    const withKey = from(GROUP, 'G3', { senderKeyDistributionMessage: { groupId: GROUP, axolotlSenderKeyDistributionMessage: randomBytes(8) } }, { participant: ANA });
    Object.assign(withKey.message!, proto.Message.decode(proto.Message.encode({ conversation: 'primeira' }).finish()));
    expect((await fact(withKey, ctx)).content).toEqual({ kind: 'text', body: 'primeira' });
  });

  it("maps a customer's broadcast-list message as theirs, in their own chat", async () => {
    const { ctx } = context();
    const out = await fact(from('1764000000@broadcast', 'B1', { conversation: 'promoção' }, { participant: ANA_LID, pushName: 'Ana' }), ctx);
    expect(out).toMatchObject({ chat_jid: ANA, from: ANA, group: null, sender: { jid: ANA, lid: ANA_LID } });
  });

  it("maps the owner's own sends from the phone as origin external (direct, to a lid, in a group), and drops echoes of ours", async () => {
    const { ctx, ourSends } = context();
    const own = await fact(from(ANA, 'PHONE1', { conversation: 'do celular' }, { fromMe: true }), ctx);
    expect(own).toMatchObject({ origin: 'external', from: OWN.jid, to: ANA, chat_jid: ANA, sender: { jid: OWN.jid, lid: OWN.lid, name: OWN.name, phone: phoneOfJid(OWN.jid) } });
    const toLid = await fact(from(BRUNO_LID, 'PHONE2', { conversation: 'oi' }, { fromMe: true, remoteJidAlt: BRUNO }), ctx);
    expect(toLid).toMatchObject({ origin: 'external', from: OWN.jid, to: BRUNO, chat_jid: BRUNO });
    const inGroup = await fact(from(GROUP, 'PHONE3', { conversation: 'bom dia' }, { fromMe: true, participant: OWN.lid }), ctx);
    expect(inGroup).toMatchObject({ origin: 'external', from: OWN.jid, to: GROUP, chat_jid: GROUP, group: { jid: GROUP }, sender: { jid: OWN.jid } });
    ourSends.add('API1').add('API2');
    expect(await skipped(from(ANA, 'API1', { conversation: 'via API' }, { fromMe: true }), ctx)).toBe('the echo of one of our sends');
    expect(await skipped(from(GROUP, 'API2', { imageMessage: { caption: 'via API' } }, { fromMe: true, participant: OWN.jid }), ctx)).toBe('the echo of one of our sends');
    // The same id from a customer is theirs, whatever we sent.
    expect((await fact(from(ANA, 'API1', { conversation: 'coincidência' }), ctx)).origin).toBe('customer');
  });

  it('maps an edit (wrapped in editedMessage, or bare) and a deletion for everyone (REVOKE) to the message they change', async () => {
    const { ctx } = context();
    const { Type } = proto.Message.ProtocolMessage;
    const wrapped = { editedMessage: { message: { protocolMessage: { type: Type.MESSAGE_EDIT, key: { remoteJid: OWN.jid, fromMe: true, id: 'W1' }, editedMessage: { conversation: 'corrigido' } } } } };
    const edit = await fact(from(ANA, 'P2', wrapped, { pushName: 'Ana' }), ctx);
    expect(edit).toMatchObject({ wa_message_id: 'P2', origin: 'customer', chat_jid: ANA, quoted_id: 'W1', quoted_participant: ANA, content: { kind: 'edit', quoted_message_id: 'W1', body: 'corrigido' } });
    const caption = { protocolMessage: { type: Type.MESSAGE_EDIT, key: { id: 'W3' }, editedMessage: { imageMessage: { caption: 'nova legenda' } } } };
    expect((await fact(from(GROUP, 'P4', caption, { participant: BRUNO }), ctx)).content).toEqual({ kind: 'edit', quoted_message_id: 'W3', body: 'nova legenda' });
    const revoke = await fact(from(ANA, 'P1', { protocolMessage: { type: Type.REVOKE, key: { id: 'X' } } }), ctx);
    expect(revoke).toMatchObject({ wa_message_id: 'P1', quoted_id: 'X', quoted_participant: ANA, content: { kind: 'delete', quoted_message_id: 'X' } });
    // A group admin deletes a member's message: the key names that member.
    const byAdmin = await fact(from(GROUP, 'P5', { protocolMessage: { type: Type.REVOKE, key: { remoteJid: GROUP, id: 'Y', participant: ANA_LID } } }, { participant: BRUNO }), ctx);
    expect(byAdmin).toMatchObject({ sender: { jid: BRUNO }, group: { jid: GROUP }, quoted_id: 'Y', quoted_participant: ANA, content: { kind: 'delete', quoted_message_id: 'Y' } });
    // The owner deletes from the phone: origin external, the deleted message is the number's own.
    const own = await fact(from(ANA, 'P6', { protocolMessage: { type: Type.REVOKE, key: { remoteJid: ANA, fromMe: true, id: 'Z' } } }, { fromMe: true }), ctx);
    expect(own).toMatchObject({ origin: 'external', quoted_id: 'Z', quoted_participant: OWN.jid, content: { kind: 'delete' } });
  });

  it('skips other protocol messages, edits without text, sender keys alone, status and channel posts, stubs without content', async () => {
    const { ctx } = context();
    const { Type } = proto.Message.ProtocolMessage;
    expect(await skipped(from(ANA, 'P7', { protocolMessage: { type: Type.EPHEMERAL_SETTING, ephemeralExpiration: 86_400 } }), ctx)).toBe('a protocol message (EPHEMERAL_SETTING)');
    const noText = { protocolMessage: { type: Type.MESSAGE_EDIT, key: { id: 'W1' }, editedMessage: { stickerMessage: {} } } };
    expect(await skipped(from(ANA, 'P8', noText), ctx)).toBe('an edit of W1 without text');
    expect(await skipped(from(GROUP, 'P3', { senderKeyDistributionMessage: { groupId: GROUP } }, { participant: ANA }), ctx)).toBe('no content');
    expect(await skipped(from('status@broadcast', 'S1', { conversation: 'status' }, { participant: ANA }), ctx)).toBe('a status post');
    expect(await skipped(from('120363000000000001@newsletter', 'N0', { conversation: 'canal' }), ctx)).toBe('a channel post');
    expect(await skipped(received({ key: { remoteJid: GROUP, id: 'N1' }, messageStubType: proto.WebMessageInfo.StubType.GROUP_PARTICIPANT_ADD }), ctx)).toBe('a system notice');
    expect(await skipped(from(GROUP, 'N2', { conversation: 'sem autor' }), ctx)).toBe('no author of a group or broadcast message');
  });
});

describe('Polls and votes mapped from real protocol objects', () => {
  const OPTIONS = ['Queijo', 'Frango', 'Palmito'];
  const pollBody = (type: string, secret: Uint8Array) => ({ messageContextInfo: { messageSecret: secret }, [type]: { name: 'Sabor?', options: OPTIONS.map((optionName) => ({ optionName })), selectableOptionsCount: 2 } });

  for (const type of ['pollCreationMessage', 'pollCreationMessageV2', 'pollCreationMessageV3', 'pollCreationMessageV5']) {
    it(`maps a received ${type} and keeps its secret and creator`, async () => {
      const { ctx, polls } = context();
      const secret = randomBytes(32);
      const poll = await fact(from(ANA_LID, `POLL-${type}`, pollBody(type, secret)), ctx);
      expect(poll.content).toEqual({ kind: 'poll', name: 'Sabor?', options: OPTIONS, selectable_count: 2, message_secret: secret });
      expect(polls.get(`POLL-${type}`)).toEqual({ creatorJid: ANA_LID, secret, options: OPTIONS });
    });
  }

  it('reads the secret of a poll in a disappearing chat from the outer message', async () => {
    const { ctx, polls } = context();
    const secret = randomBytes(32);
    const { messageContextInfo, ...poll } = pollBody('pollCreationMessageV3', secret);
    const out = await fact(from(ANA, 'POLL-E', { messageContextInfo, ephemeralMessage: { message: poll } }), ctx);
    expect(out.content).toMatchObject({ kind: 'poll', message_secret: secret });
    expect(polls.get('POLL-E')?.secret).toEqual(secret);
  });

  it('decrypts a vote encrypted as the voter\'s phone does, and names the chosen options in the poll\'s order', async () => {
    const { ctx } = context();
    const secret = randomBytes(32);
    await fact(from(ANA, 'POLL1', pollBody('pollCreationMessageV3', secret)), ctx);
    const vote = encryptVote({ secret, pollId: 'POLL1', creatorJid: ANA, voterJid: ANA, chosen: ['Palmito', 'Queijo'] });
    const voted = await fact(from(ANA, 'V1', { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: ANA, id: 'POLL1' }, vote } }), ctx);
    expect(voted).toMatchObject({ origin: 'customer', sender: { jid: ANA }, content: { kind: 'poll_vote', poll_message_id: 'POLL1', selected: ['Queijo', 'Palmito'] } });
  });

  it('decrypts a vote on our own poll by a lid voter, and a withdrawn vote (empty selection)', async () => {
    const { ctx, polls } = context();
    const secret = randomBytes(32);
    polls.set('OURPOLL', { creatorJid: OWN.jid, secret, options: ['Sim', 'Não'] });
    const byLid = encryptVote({ secret, pollId: 'OURPOLL', creatorJid: OWN.lid, voterJid: BRUNO_LID, chosen: ['Não'] });
    const out = await fact(from(BRUNO_LID, 'V2', { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: BRUNO_LID, fromMe: true, id: 'OURPOLL' }, vote: byLid } }), ctx);
    expect(out).toMatchObject({ sender: { jid: BRUNO_LID }, content: { kind: 'poll_vote', poll_message_id: 'OURPOLL', selected: ['Não'] } });
    const withdrawn = encryptVote({ secret, pollId: 'OURPOLL', creatorJid: OWN.jid, voterJid: ANA, chosen: [] });
    const none = await fact(from(ANA, 'V3', { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: ANA, fromMe: true, id: 'OURPOLL' }, vote: withdrawn } }), ctx);
    expect(none.content).toEqual({ kind: 'poll_vote', poll_message_id: 'OURPOLL', selected: [] });
  });

  it("decrypts a group vote on a member's poll kept under her lid, encrypted with phone jids", async () => {
    const { ctx, polls } = context();
    const secret = randomBytes(32);
    await fact(from(GROUP, 'GPOLL', pollBody('pollCreationMessageV3', secret), { participant: ANA_LID }), ctx);
    expect(polls.get('GPOLL')?.creatorJid).toBe(ANA_LID);
    const vote = encryptVote({ secret, pollId: 'GPOLL', creatorJid: ANA, voterJid: BRUNO, chosen: ['Frango'] });
    const update = { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: GROUP, participant: ANA_LID, id: 'GPOLL' }, vote } };
    const out = await fact(from(GROUP, 'GV1', update, { participant: BRUNO_LID, participantAlt: BRUNO }), ctx);
    expect(out).toMatchObject({ chat_jid: GROUP, sender: { jid: BRUNO, lid: BRUNO_LID }, content: { kind: 'poll_vote', poll_message_id: 'GPOLL', selected: ['Frango'] } });
  });

  it("decrypts the owner's own vote from the phone (origin external)", async () => {
    const { ctx, polls } = context();
    const secret = randomBytes(32);
    polls.set('ANAPOLL', { creatorJid: ANA, secret, options: ['Sim', 'Não'] });
    const vote = encryptVote({ secret, pollId: 'ANAPOLL', creatorJid: ANA, voterJid: OWN.jid, chosen: ['Sim'] });
    const out = await fact(from(ANA, 'V5', { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: ANA, fromMe: false, id: 'ANAPOLL' }, vote } }, { fromMe: true }), ctx);
    expect(out).toMatchObject({ origin: 'external', sender: { jid: OWN.jid }, content: { kind: 'poll_vote', selected: ['Sim'] } });
  });

  it('skips a vote on an unknown poll, and one encrypted with another secret', async () => {
    const { ctx, polls } = context();
    const vote = encryptVote({ secret: randomBytes(32), pollId: 'P9', creatorJid: OWN.jid, voterJid: ANA, chosen: ['Sim'] });
    const message = from(ANA, 'V4', { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: ANA, fromMe: true, id: 'P9' }, vote } });
    expect(await skipped(message, ctx)).toBe('a vote on an unknown poll P9');
    polls.set('P9', { creatorJid: OWN.jid, secret: randomBytes(32), options: ['Sim'] });
    expect(await skipped(message, ctx)).toBe('a vote on P9 that no known jid opens');
  });
});
