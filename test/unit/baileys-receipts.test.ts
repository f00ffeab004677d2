import { proto, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { groupFacts } from '../../connectors/baileys/group-events.js';
import { statusFacts } from '../../connectors/baileys/receipts.js';
import { phoneOfJid } from '../../schemas/phones.js';

const OWN = { jid: '5511900000000@s.whatsapp.net', lid: '900000000000001@lid' };
const ANA = '5511988887777@s.whatsapp.net';
const ANA_LID = '123456789012345@lid';
const BRUNO = '5511966665555@s.whatsapp.net';
const BRUNO_LID = '555555555555555@lid';
const GROUP = '120363040000000000@g.us';
const lids = (lid: string) => (lid === ANA_LID ? ANA : undefined);

// The socket builds these events as plain objects (keys, statuses and receipts of its own), not protobuf messages.
describe('Baileys receipts mapped to status facts', () => {
  const Status = proto.WebMessageInfo.Status;
  const update = (id: string, status: proto.WebMessageInfo.Status, fromMe = true, extra: Partial<WAMessage> = {}) => ({ key: { remoteJid: ANA, fromMe, id }, update: { status, ...extra } });

  it('maps status updates of our sends at the receipt time, and ignores received messages and pending ones', () => {
    const updates: BaileysEventMap['messages.update'] = [
      update('S1', Status.SERVER_ACK),
      update('S1', Status.DELIVERY_ACK, true, { messageTimestamp: 1_764_000_010 }),
      update('S1', Status.READ, true, { messageTimestamp: 1_764_000_020 }),
      update('S2', Status.PLAYED, true, { messageTimestamp: 0 }),
      update('S4', Status.PENDING),
      update('IN1', Status.READ, false),
    ];
    expect(statusFacts(updates, [], 42).map((f) => [f.wa_message_id, f.status, f.error_code, f.occurred_at])).toEqual([
      ['S1', 'sent', null, 42],
      ['S1', 'delivered', null, 1_764_000_010_000],
      ['S1', 'read', null, 1_764_000_020_000],
      ['S2', 'read', null, 42],
    ]);
  });

  it('maps an error of the network to failed, with its code in the reason', () => {
    const [bare, coded] = statusFacts([update('S3', Status.ERROR), update('S5', Status.ERROR, true, { messageStubParameters: ['463', 'Your account has been restricted'] })], [], 7);
    expect(bare).toEqual({ kind: 'status', wa_message_id: 'S3', status: 'failed', error_code: 'delivery_failed', error_reason: 'the network reported an error', occurred_at: 7 });
    expect(coded).toMatchObject({ status: 'failed', error_code: 'delivery_failed' });
    expect(coded?.error_reason).toContain('463; Your account has been restricted');
  });

  it('maps per-device receipts (groups: one per member) with their own times, ours only', () => {
    const receipt = (id: string, r: Partial<proto.IUserReceipt>, fromMe = true) => ({ key: { remoteJid: GROUP, fromMe, id, participant: fromMe ? undefined : ANA }, receipt: { userJid: ANA, ...r } });
    const receipts: BaileysEventMap['message-receipt.update'] = [
      receipt('G1', { receiptTimestamp: 1_764_000_001 }),
      receipt('G1', { readTimestamp: 1_764_000_002 }),
      receipt('G2', { playedTimestamp: 1_764_000_003 }),
      receipt('G3', { readTimestamp: 1_764_000_004 }, false),
    ];
    expect(statusFacts([], receipts, 0).map((f) => [f.wa_message_id, f.status, f.occurred_at])).toEqual([
      ['G1', 'delivered', 1_764_000_001_000],
      ['G1', 'read', 1_764_000_002_000],
      ['G2', 'read', 1_764_000_003_000],
    ]);
  });
});

describe('Baileys group events mapped to group facts', () => {
  type Participants = BaileysEventMap['group-participants.update'];
  const change = (action: Participants['action'], participants: Participants['participants'], author = ANA): Participants => ({ id: GROUP, author, participants, action });

  it('maps participants added, with lids resolved by mapping or the phone the network sent along', () => {
    const added = groupFacts(OWN, change('add', [{ id: ANA_LID }, { id: BRUNO_LID, phoneNumber: BRUNO }, { id: BRUNO, lid: BRUNO_LID, notify: 'Bruno' }], OWN.jid), undefined, lids, 7);
    expect(added).toEqual([
      {
        occurred_at: 7,
        kind: 'participant_added',
        group: { jid: GROUP, name: null },
        author: OWN.jid,
        participants: [
          { jid: ANA, lid: ANA_LID, name: null, phone: phoneOfJid(ANA) },
          { jid: BRUNO, lid: BRUNO_LID, name: null, phone: phoneOfJid(BRUNO) },
          { jid: BRUNO, lid: BRUNO_LID, name: 'Bruno', phone: phoneOfJid(BRUNO) },
        ],
        subject: null,
        description: null,
      },
    ]);
  });

  it('maps each action, the number itself joining or leaving, a lid author resolved; a number change gives nothing', () => {
    const kinds = (participants: Participants) => groupFacts(OWN, participants, undefined, lids).map((f) => f.kind);
    expect(kinds(change('remove', [{ id: ANA }]))).toEqual(['participant_removed']);
    expect(kinds(change('promote', [{ id: ANA }]))).toEqual(['participant_promoted']);
    expect(kinds(change('demote', [{ id: ANA }]))).toEqual(['participant_demoted']);
    expect(kinds(change('add', [{ id: OWN.lid }]))).toEqual(['joined']);
    expect(kinds(change('add', [{ id: OWN.jid, lid: OWN.lid, name: 'Padaria' }]))).toEqual(['joined']);
    expect(kinds(change('remove', [{ id: OWN.jid }]))).toEqual(['left']);
    expect(kinds(change('modify', [{ id: ANA }]))).toEqual([]);
    const byLid = groupFacts(OWN, { ...change('remove', [{ id: BRUNO }], BRUNO_LID), authorPn: BRUNO }, undefined, lids);
    expect(byLid[0]?.author).toBe(BRUNO);
  });

  it('maps subject and description changes (a description removed too), authors resolved', () => {
    const groups: BaileysEventMap['groups.update'] = [
      { id: GROUP, subject: 'Clientes VIP', author: ANA_LID },
      { id: GROUP, desc: 'Só VIP', author: BRUNO_LID, authorPn: BRUNO },
      { id: GROUP, desc: undefined },
      { id: GROUP, announce: true },
    ];
    expect(groupFacts(OWN, undefined, groups, lids, 9).map((f) => [f.kind, f.author, f.subject, f.description, f.group.name, f.occurred_at])).toEqual([
      ['subject_changed', ANA, 'Clientes VIP', null, 'Clientes VIP', 9],
      ['description_changed', BRUNO, null, 'Só VIP', null, 9],
      ['description_changed', null, null, null, null, 9],
    ]);
  });
});
