import { randomBytes } from 'node:crypto';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { groupFacts } from '../../connectors/baileys/group-events.js';
import { mapInbound, type InboundContext, type InboundOutcome, type MediaKind } from '../../connectors/baileys/inbound.js';
import type { KnownPoll } from '../../connectors/baileys/poll-store.js';
import { statusFacts } from '../../connectors/baileys/receipts.js';
import type { InboundFact } from '../../connectors/network/connector.js';
import type { Media } from '../../schemas/records.js';
import { encryptVote } from '../support/poll-vote.js';

const OWN = { jid: '5511900000000@s.whatsapp.net', lid: '900000000000001@lid', name: 'Padaria' };
const ANA = '5511988887777@s.whatsapp.net';
const ANA_LID = '123456789012345@lid';
const BRUNO_LID = '555555555555555@lid';
const GROUP = '120363040000000000@g.us';

/**
 * A message as the socket hands it over: built with Baileys' protobuf classes and decoded from its
 * bytes; the alternate jids are not protobuf fields, the socket sets them on the decoded key.
 */
function received(object: Record<string, unknown>, alt: { remoteJidAlt?: string; participantAlt?: string } = {}): WAMessage {
  const bytes = proto.WebMessageInfo.encode(proto.WebMessageInfo.fromObject({ messageTimestamp: 1_764_000_000, ...object })).finish();
  const message = proto.WebMessageInfo.decode(bytes) as WAMessage;
  Object.assign(message.key, alt);
  return message;
}

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
    storeMedia: async (message, kind): Promise<Media> => {
      stored.push({ kind, id: message.key.id! });
      return { id: `media-${message.key.id}`, mime_type: 'image/jpeg', filename: null, size: 3, storage_key: `k/${message.key.id}`, sha256: 'ab' };
    },
    ...overrides,
  };
  return { ctx, polls, ourSends, stored };
}

function fact(outcome: InboundOutcome): InboundFact {
  if (outcome.kind !== 'fact') throw new Error(`skipped: ${outcome.reason}`);
  return outcome.fact;
}

describe('Baileys messages mapped to inbound facts (real protocol objects)', () => {
  it('maps a text from a customer: chat, sender with push name, time in ms', async () => {
    const { ctx } = context();
    const out = fact(await mapInbound(received({ key: { remoteJid: ANA, fromMe: false, id: 'W1' }, pushName: 'Ana', message: { conversation: 'Olá' } }), ctx));
    expect(out).toMatchObject({
      origin: 'customer',
      wa_message_id: 'W1',
      chat_jid: ANA,
      from: ANA,
      to: null,
      sender: { jid: ANA, lid: null, name: 'Ana', phone: '+5511988887777' },
      content: { kind: 'text', body: 'Olá' },
      occurred_at: 1_764_000_000_000,
      group: null,
      quoted_id: null,
    });
  });

  it('maps a reply with mentions (extendedTextMessage with contextInfo)', async () => {
    const { ctx } = context();
    const message = received({
      key: { remoteJid: ANA, fromMe: false, id: 'W2' },
      message: { extendedTextMessage: { text: 'sim @5511900000000', contextInfo: { stanzaId: 'OUR1', participant: OWN.jid, mentionedJid: [OWN.jid, ANA_LID] } } },
    });
    const out = fact(await mapInbound(message, ctx));
    expect(out.content).toEqual({ kind: 'text', body: 'sim @5511900000000' });
    expect(out).toMatchObject({ quoted_id: 'OUR1', quoted_participant: OWN.jid, mentions: [OWN.jid, ANA] });
  });

  for (const [kind, body, expected] of [
    ['image', { imageMessage: { caption: 'foto', mimetype: 'image/jpeg', fileLength: 3 } }, { kind: 'image', caption: 'foto' }],
    ['video', { videoMessage: { caption: '', mimetype: 'video/mp4' } }, { kind: 'video', caption: null }],
    ['audio', { audioMessage: { ptt: true, mimetype: 'audio/ogg; codecs=opus' } }, { kind: 'audio', ptt: true }],
    ['document', { documentMessage: { fileName: 'nota.pdf', caption: 'segue', mimetype: 'application/pdf' } }, { kind: 'document', caption: 'segue' }],
    ['sticker', { stickerMessage: { mimetype: 'image/webp' } }, { kind: 'sticker' }],
  ] as const) {
    it(`maps a received ${kind} and stores its media`, async () => {
      const { ctx, stored } = context();
      const out = fact(await mapInbound(received({ key: { remoteJid: ANA, fromMe: false, id: `M-${kind}` }, message: body }), ctx));
      expect(out.content).toMatchObject({ ...expected, media: { id: `media-M-${kind}` } });
      expect(stored).toEqual([{ kind, id: `M-${kind}` }]);
    });
  }

  it('delivers a media message whose download failed, with media null', async () => {
    const { ctx } = context({ storeMedia: async () => null });
    const out = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'M-lost' }, message: { imageMessage: { caption: 'x' } } }), ctx));
    expect(out.content).toEqual({ kind: 'image', media: null, caption: 'x' });
  });

  it('opens wrappers: ephemeral, view once, a document with caption', async () => {
    const { ctx } = context();
    const ephemeral = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'E1' }, message: { ephemeralMessage: { message: { conversation: 'some' } } } }), ctx));
    expect(ephemeral.content).toEqual({ kind: 'text', body: 'some' });
    const viewOnce = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'E2' }, message: { viewOnceMessageV2: { message: { imageMessage: { caption: 'uma vez' } } } } }), ctx));
    expect(viewOnce.content).toMatchObject({ kind: 'image', caption: 'uma vez' });
    const captioned = fact(
      await mapInbound(received({ key: { remoteJid: ANA, id: 'E3' }, message: { documentWithCaptionMessage: { message: { documentMessage: { fileName: 'a.pdf', caption: 'doc' } } } } }), ctx),
    );
    expect(captioned.content).toMatchObject({ kind: 'document', caption: 'doc' });
  });

  it('maps location, a contact and a contacts array', async () => {
    const { ctx } = context();
    const place = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'L1' }, message: { locationMessage: { degreesLatitude: -23.5, degreesLongitude: -46.6, name: 'Loja', address: 'Rua A, 1' } } }), ctx));
    expect(place.content).toEqual({ kind: 'location', latitude: -23.5, longitude: -46.6, name: 'Loja', address: 'Rua A, 1' });
    const card = 'BEGIN:VCARD\nVERSION:3.0\nFN:Caio\nTEL:+5511977776666\nEND:VCARD';
    const contact = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'C1' }, message: { contactMessage: { displayName: 'Caio', vcard: card } } }), ctx));
    expect(contact.content).toEqual({ kind: 'contact', contact_name: 'Caio', contact_vcard: card });
    const many = fact(
      await mapInbound(
        received({ key: { remoteJid: ANA, id: 'C2' }, message: { contactsArrayMessage: { contacts: [{ displayName: 'Caio', vcard: card }, { displayName: 'Dora', vcard: 'BEGIN:VCARD\nFN:Dora\nEND:VCARD' }] } } }),
        ctx,
      ),
    );
    expect(many.content).toEqual({ kind: 'contact', contact_name: 'Caio, Dora', contact_vcard: `${card}\nBEGIN:VCARD\nFN:Dora\nEND:VCARD` });
  });

  it('maps a reaction (and its removal) with the reacted message as quoted_id', async () => {
    const { ctx } = context();
    const reacted = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'R1' }, message: { reactionMessage: { key: { remoteJid: ANA, fromMe: true, id: 'OUR2' }, text: '👍' } } }), ctx));
    expect(reacted).toMatchObject({ quoted_id: 'OUR2', content: { kind: 'reaction', quoted_message_id: 'OUR2', emoji: '👍' } });
    const removed = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'R2' }, message: { reactionMessage: { key: { remoteJid: ANA, fromMe: true, id: 'OUR2' }, text: '' } } }), ctx));
    expect(removed.content).toEqual({ kind: 'reaction', quoted_message_id: 'OUR2', emoji: '' });
  });

  it('resolves a lid sender to the phone (mapping or the alternate jid), and keeps an unknown lid as is', async () => {
    const { ctx } = context();
    const known = fact(await mapInbound(received({ key: { remoteJid: ANA_LID, id: 'LID1' }, message: { conversation: 'a' } }), ctx));
    expect(known).toMatchObject({ chat_jid: ANA, sender: { jid: ANA, lid: ANA_LID, phone: '+5511988887777' } });
    const viaAlt = fact(await mapInbound(received({ key: { remoteJid: BRUNO_LID, id: 'LID2' }, message: { conversation: 'b' } }, { remoteJidAlt: '5511966665555@s.whatsapp.net' }), ctx));
    expect(viaAlt).toMatchObject({ chat_jid: '5511966665555@s.whatsapp.net', sender: { jid: '5511966665555@s.whatsapp.net', lid: BRUNO_LID } });
    const unknown = fact(await mapInbound(received({ key: { remoteJid: BRUNO_LID, id: 'LID3' }, message: { conversation: 'c' } }), ctx));
    expect(unknown).toMatchObject({ chat_jid: BRUNO_LID, sender: { jid: BRUNO_LID, lid: BRUNO_LID, phone: null } });
  });

  it('maps a group message: the chat is the group, the sender its participant (lid resolved)', async () => {
    const { ctx } = context();
    const out = fact(await mapInbound(received({ key: { remoteJid: GROUP, participant: ANA_LID, id: 'G1' }, pushName: 'Ana', message: { conversation: 'oi grupo' } }), ctx));
    expect(out).toMatchObject({ chat_jid: GROUP, from: GROUP, group: { jid: GROUP, name: null }, sender: { jid: ANA, lid: ANA_LID, name: 'Ana' } });
  });

  it("maps the owner's own send from the phone as origin external, and drops the echo of one of ours", async () => {
    const { ctx, ourSends } = context();
    const own = fact(await mapInbound(received({ key: { remoteJid: ANA, fromMe: true, id: 'PHONE1' }, message: { conversation: 'do celular' } }), ctx));
    expect(own).toMatchObject({ origin: 'external', from: OWN.jid, to: ANA, chat_jid: ANA, sender: { jid: OWN.jid, phone: '+5511900000000' } });
    ourSends.add('API1');
    expect(await mapInbound(received({ key: { remoteJid: ANA, fromMe: true, id: 'API1' }, message: { conversation: 'via API' } }), ctx)).toEqual({ kind: 'skip', reason: 'the echo of one of our sends' });
  });

  it('skips protocol messages, status posts and stubs without content', async () => {
    const { ctx } = context();
    expect((await mapInbound(received({ key: { remoteJid: ANA, id: 'P1' }, message: { protocolMessage: { type: 0, key: { id: 'X' } } } }), ctx)).kind).toBe('skip');
    expect((await mapInbound(received({ key: { remoteJid: 'status@broadcast', participant: ANA, id: 'S1' }, message: { conversation: 'status' } }), ctx)).kind).toBe('skip');
    expect((await mapInbound(received({ key: { remoteJid: GROUP, id: 'N1' }, messageStubType: 27 }), ctx)).kind).toBe('skip');
  });

  it('maps a poll creation, keeps its secret, and names the options of a vote encrypted as a phone does', async () => {
    const { ctx, polls } = context();
    const secret = randomBytes(32);
    const poll = fact(
      await mapInbound(
        received({
          key: { remoteJid: ANA, fromMe: false, id: 'POLL1' },
          message: { messageContextInfo: { messageSecret: secret }, pollCreationMessageV3: { name: 'Sabor?', options: [{ optionName: 'Queijo' }, { optionName: 'Frango' }, { optionName: 'Palmito' }], selectableOptionsCount: 1 } },
        }),
        ctx,
      ),
    );
    expect(poll.content).toEqual({ kind: 'poll', name: 'Sabor?', options: ['Queijo', 'Frango', 'Palmito'], selectable_count: 1, message_secret: secret });
    expect(polls.get('POLL1')).toMatchObject({ creatorJid: ANA, options: ['Queijo', 'Frango', 'Palmito'] });

    const vote = encryptVote({ secret, pollId: 'POLL1', creatorJid: ANA, voterJid: ANA, chosen: ['Palmito', 'Queijo'] });
    const voted = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'V1' }, message: { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: ANA, id: 'POLL1' }, vote } } }), ctx));
    expect(voted.content).toEqual({ kind: 'poll_vote', poll_message_id: 'POLL1', selected: ['Queijo', 'Palmito'] });
  });

  it('decrypts a vote on our own poll by a lid voter, and a withdrawn vote (empty selection)', async () => {
    const { ctx, polls } = context();
    const secret = randomBytes(32);
    polls.set('OURPOLL', { creatorJid: OWN.jid, secret, options: ['Sim', 'Não'] });
    const byLid = encryptVote({ secret, pollId: 'OURPOLL', creatorJid: OWN.jid, voterJid: BRUNO_LID, chosen: ['Não'] });
    const out = fact(await mapInbound(received({ key: { remoteJid: BRUNO_LID, id: 'V2' }, message: { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: BRUNO_LID, fromMe: true, id: 'OURPOLL' }, vote: byLid } } }), ctx));
    expect(out).toMatchObject({ sender: { jid: BRUNO_LID }, content: { kind: 'poll_vote', poll_message_id: 'OURPOLL', selected: ['Não'] } });
    const withdrawn = encryptVote({ secret, pollId: 'OURPOLL', creatorJid: OWN.jid, voterJid: ANA, chosen: [] });
    const none = fact(await mapInbound(received({ key: { remoteJid: ANA, id: 'V3' }, message: { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: ANA, fromMe: true, id: 'OURPOLL' }, vote: withdrawn } } }), ctx));
    expect(none.content).toEqual({ kind: 'poll_vote', poll_message_id: 'OURPOLL', selected: [] });
  });

  it('skips a vote on an unknown poll, and one encrypted with another secret', async () => {
    const { ctx, polls } = context();
    const vote = encryptVote({ secret: randomBytes(32), pollId: 'P9', creatorJid: OWN.jid, voterJid: ANA, chosen: ['Sim'] });
    const message = received({ key: { remoteJid: ANA, id: 'V4' }, message: { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: ANA, fromMe: true, id: 'P9' }, vote } } });
    expect(await mapInbound(message, ctx)).toEqual({ kind: 'skip', reason: 'a vote on an unknown poll P9' });
    polls.set('P9', { creatorJid: OWN.jid, secret: randomBytes(32), options: ['Sim'] });
    expect((await mapInbound(message, ctx)).kind).toBe('skip');
  });
});

describe('Baileys receipts and group events mapped to facts', () => {
  const Status = proto.WebMessageInfo.Status;

  it('maps status updates of our sends, and ignores those of received messages and pending ones', () => {
    const updates = [
      { key: { remoteJid: ANA, fromMe: true, id: 'S1' }, update: { status: Status.SERVER_ACK } },
      { key: { remoteJid: ANA, fromMe: true, id: 'S1' }, update: { status: Status.DELIVERY_ACK } },
      { key: { remoteJid: ANA, fromMe: true, id: 'S1' }, update: { status: Status.READ } },
      { key: { remoteJid: ANA, fromMe: true, id: 'S2' }, update: { status: Status.PLAYED } },
      { key: { remoteJid: ANA, fromMe: true, id: 'S3' }, update: { status: Status.ERROR } },
      { key: { remoteJid: ANA, fromMe: true, id: 'S4' }, update: { status: Status.PENDING } },
      { key: { remoteJid: ANA, fromMe: false, id: 'IN1' }, update: { status: Status.READ } },
    ];
    const facts = statusFacts(updates, [], 42);
    expect(facts.map((f) => [f.wa_message_id, f.status, f.error_code])).toEqual([
      ['S1', 'sent', null],
      ['S1', 'delivered', null],
      ['S1', 'read', null],
      ['S2', 'read', null],
      ['S3', 'failed', 'delivery_failed'],
    ]);
    expect(facts.every((f) => f.occurred_at === 42)).toBe(true);
  });

  it('maps per-device receipts (groups: one per member) with their own times', () => {
    const receipt = (id: string, r: Record<string, number>) => ({ key: { remoteJid: GROUP, fromMe: true, id }, receipt: { userJid: ANA, ...r } });
    const facts = statusFacts([], [receipt('G1', { receiptTimestamp: 1_764_000_001 }), receipt('G1', { readTimestamp: 1_764_000_002 }), receipt('G2', { playedTimestamp: 1_764_000_003 })], 0);
    expect(facts.map((f) => [f.wa_message_id, f.status, f.occurred_at])).toEqual([
      ['G1', 'delivered', 1_764_000_001_000],
      ['G1', 'read', 1_764_000_002_000],
      ['G2', 'read', 1_764_000_003_000],
    ]);
  });

  it('maps participant changes (lids resolved), the number joining or leaving, and subject and description changes', () => {
    const lids = (lid: string) => (lid === ANA_LID ? ANA : undefined);
    const added = groupFacts(OWN, { id: GROUP, author: OWN.jid, participants: [{ id: ANA_LID }, { id: BRUNO_LID, phoneNumber: '5511966665555@s.whatsapp.net' }], action: 'add' }, undefined, lids, 7);
    expect(added).toEqual([
      {
        occurred_at: 7,
        kind: 'participant_added',
        group: { jid: GROUP, name: null },
        author: OWN.jid,
        participants: [
          { jid: ANA, lid: ANA_LID, name: null, phone: '+5511988887777' },
          { jid: '5511966665555@s.whatsapp.net', lid: BRUNO_LID, name: null, phone: '+5511966665555' },
        ],
        subject: null,
        description: null,
      },
    ]);
    expect(groupFacts(OWN, { id: GROUP, author: ANA, participants: [{ id: OWN.lid }], action: 'add' }, undefined, lids)[0]!.kind).toBe('joined');
    expect(groupFacts(OWN, { id: GROUP, author: ANA, participants: [{ id: OWN.jid }], action: 'remove' }, undefined, lids)[0]!.kind).toBe('left');
    expect(groupFacts(OWN, { id: GROUP, author: ANA, participants: [{ id: ANA }], action: 'promote' }, undefined, lids)[0]!.kind).toBe('participant_promoted');
    expect(groupFacts(OWN, { id: GROUP, author: ANA, participants: [{ id: ANA }], action: 'modify' }, undefined, lids)).toEqual([]);
    const renamed = groupFacts(OWN, undefined, [{ id: GROUP, subject: 'Clientes VIP', author: ANA }, { id: GROUP, desc: 'Só VIP' }], lids, 9);
    expect(renamed.map((f) => [f.kind, f.subject, f.description, f.group.name])).toEqual([
      ['subject_changed', 'Clientes VIP', null, 'Clientes VIP'],
      ['description_changed', null, 'Só VIP', null],
    ]);
  });
});
