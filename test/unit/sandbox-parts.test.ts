import { describe, expect, it } from 'vitest';
import { inboundRecord, nextState, statusRecord } from '../../connectors/network/fact-records.js';
import { phoneJid, phoneOfJid, toJid } from '../../schemas/phones.js';
import { buttonsAsText, listAsText, otpBubbles } from '../../connectors/network/outgoing-text.js';
import { optionHash, resolveVote } from '../../connectors/network/polls.js';
import { KeyedSerial } from '../../shared/serial.js';
import { changeBehaviour, defaultBehaviour, recipientBlocked, sendFails } from '../../connectors/sandbox/behaviour.js';
import { BanWatch, banRule } from '../../connectors/sandbox/bans.js';
import { derivedPhone, pairingChallenge, simulatedWaId } from '../../connectors/sandbox/ids.js';
import { People } from '../../connectors/sandbox/people.js';
import { Recent } from '../../connectors/sandbox/recent.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InstanceState } from '../../schemas/records.js';

const state: InstanceState = {
  event_id: asEventId('evt_1'),
  occurred_at: 1,
  account_id: asAccountId('acc_1'),
  project_id: asProjectId('prj_1'),
  instance_id: asInstanceId('inst_1'),
  phone: null,
  nickname: 'front desk',
  status: 'connecting',
  previous_status: 'pending',
  reason: null,
  health_score: 90,
  pool_ids: ['pool_1'],
  connector: 'sandbox',
  deleted: false,
};

describe('outgoing text', () => {
  it('renders buttons and lists as numbered menus', () => {
    expect(buttonsAsText({ kind: 'buttons', body: 'Pick', buttons: [{ id: 'y', title: 'Yes' }, { id: 'n', title: 'No' }] })).toBe('Pick\n\n1. Yes\n2. No');
    const list = listAsText({
      kind: 'list',
      body: 'Menu',
      sections: [
        { title: 'Hot', rows: [{ id: 'c', title: 'Coffee', description: 'black' }] },
        { title: null, rows: [{ id: 'j', title: 'Juice', description: null }] },
      ],
    });
    expect(list).toBe('Menu\n\nHot\n1. Coffee - black\n\n2. Juice');
  });

  it('splits an OTP into the context and a bubble holding only the opened code', () => {
    const content = { kind: 'otp' as const, code_masked: '••34', code_ciphertext: 'sealed:1234', expiry_minutes: 5, body: 'Your code:' };
    expect(otpBubbles(content, { open: (sealed) => sealed.replace('sealed:', '') })).toEqual(['Your code:', '1234']);
  });
});

describe('poll votes', () => {
  it('resolves option hashes to names in the poll order, dropping unknown hashes', () => {
    const options = ['Pizza', 'Sushi', 'Salad'];
    expect(resolveVote(options, [optionHash('Salad'), optionHash('Pizza'), optionHash('Burger')])).toEqual(['Pizza', 'Salad']);
    expect(resolveVote(options, [])).toEqual([]);
  });
});

describe('identities', () => {
  it('converts phones and jids', () => {
    expect(phoneJid('+5511999998888')).toBe('5511999998888@s.whatsapp.net');
    expect(phoneOfJid('5511999998888@s.whatsapp.net')).toBe('+5511999998888');
    expect(phoneOfJid('123@lid')).toBeUndefined();
    expect(toJid('120363@g.us')).toBe('120363@g.us');
  });

  it('keeps an unknown lid, resolves a known one to the phone jid, and shows the lid of a known phone', () => {
    const people = new People();
    expect(people.person('111@lid', 'Ana')).toEqual({ jid: '111@lid', lid: '111@lid', name: 'Ana', phone: null });
    people.map('111@lid', '+5511999990001');
    expect(people.person('111@lid', 'Ana')).toEqual({ jid: '5511999990001@s.whatsapp.net', lid: '111@lid', name: 'Ana', phone: '+5511999990001' });
    expect(people.person('+5511999990001')).toEqual({ jid: '5511999990001@s.whatsapp.net', lid: '111@lid', name: null, phone: '+5511999990001' });
  });

  it('knows only the newest 1,000 lids', () => {
    const people = new People();
    for (let n = 0; n <= 1_000; n++) people.map(`${n}@lid`, `+55119${String(10_000_000 + n)}`);
    expect(people.person('0@lid').phone).toBeNull();
    expect(people.person('+5511910000000').lid).toBeNull();
    expect(people.person('1@lid').phone).toBe('+5511910000001');
    expect(people.person('1000@lid').phone).toBe('+5511910001000');
  });
});

describe('sandbox behaviour', () => {
  it('fails sends to phones ending in 0000 and to the fail_to list, never to groups', () => {
    expect(sendFails(defaultBehaviour, phoneJid('+5511900000000'))).toBe(true);
    expect(sendFails(defaultBehaviour, phoneJid('+5511900000001'))).toBe(false);
    expect(sendFails(defaultBehaviour, '1203630000@g.us')).toBe(false);
    const changed = changeBehaviour(defaultBehaviour, { kind: 'set_behaviour', delivered_after_ms: 5, read_after_ms: null, fail_to: ['+5511900000001'], block_from: ['+5511900000002'] });
    expect(changed).toEqual({ deliveredAfterMs: 5, readAfterMs: 150, failTo: new Set(['+5511900000001']), blockFrom: new Set(['+5511900000002']) });
    expect(sendFails(changed, phoneJid('+5511900000001'))).toBe(true);
  });

  it('treats phones ending in 0404 and the block_from list as blockers', () => {
    expect(recipientBlocked(defaultBehaviour, phoneJid('+5511900000404'))).toBe(true);
    expect(recipientBlocked(defaultBehaviour, phoneJid('+5511900000002'))).toBe(false);
    const changed = changeBehaviour(defaultBehaviour, { kind: 'set_behaviour', delivered_after_ms: null, read_after_ms: null, fail_to: null, block_from: ['+5511900000002'] });
    expect(recipientBlocked(changed, phoneJid('+5511900000002'))).toBe(true);
  });
});

describe('sandbox bans', () => {
  const minute = 60_000;

  it(`bans on the ${banRule.blocks}th send to a blocker among the last ${banRule.withinSends} sends`, () => {
    const watch = new BanWatch();
    const verdicts: (string | undefined)[] = [];
    // Spread over days, so the hour rule never applies: one send to a blocker every 20 sends.
    for (let i = 1; i <= 200; i++) verdicts.push(watch.sent(i % 20 === 0, i * 60 * minute));
    expect(verdicts.slice(0, 199).every((v) => v === undefined)).toBe(true);
    expect(verdicts[199]).toMatch(/10 of the last 200 sends/);
  });

  it('forgets blocks once they slide out of the last sends and out of the hour', () => {
    const watch = new BanWatch();
    // One block every 23 sends, a send an hour: never 10 in the last 200 sends, never 10 in an hour.
    for (let i = 1; i <= 2_000; i++) expect(watch.sent(i % 23 === 0, i * 60 * minute)).toBeUndefined();
  });

  it(`bans on ${banRule.blocks} sends to blockers within ${banRule.withinMinutes} minutes, however many sends between`, () => {
    const watch = new BanWatch();
    let banned: string | undefined;
    let at = 0;
    for (let block = 1; block <= banRule.blocks && !banned; block++) {
      for (let i = 0; i < 100; i++) expect(watch.sent(false, (at += 1_000))).toBeUndefined();
      banned = watch.sent(true, (at += 1_000));
      if (block < banRule.blocks) expect(banned).toBeUndefined();
    }
    expect(banned).toMatch(/within 60 minutes/);
  });

  it('derives simulated ids and phones from their source, and makes challenges of the right shape', () => {
    expect(simulatedWaId('evt_a')).toBe(simulatedWaId('evt_a'));
    expect(simulatedWaId('evt_a')).not.toBe(simulatedWaId('evt_b'));
    expect(simulatedWaId('evt_a')).toMatch(/^SBX[0-9A-F]{17}$/);
    expect(derivedPhone('inst_1')).toMatch(/^\+999\d{9}$/);
    const code = pairingChallenge('code', 0);
    expect(code).toMatchObject({ kind: 'pairing', method: 'code', expires_at: 180_000 });
    expect(code.value).toMatch(/^[1-9A-Z]{8}$/);
    expect(pairingChallenge('qr', 0).value).toMatch(/^2@/);
  });

  it('remembers only the newest entries', () => {
    const recent = new Recent<string, number>(2);
    recent.set('a', 1);
    recent.set('b', 2);
    recent.set('a', 3);
    recent.set('c', 4);
    expect([recent.get('a'), recent.get('b'), recent.get('c')]).toEqual([3, undefined, 4]);
  });
});

describe('records of facts', () => {
  it('writes the full next state, with previous_status only when the status changes', () => {
    const connected = nextState(state, { kind: 'state', status: 'connected', reason: null, phone: '+5511911110001' }, 5)!;
    const { event_id, ...rest } = connected;
    expect(rest).toEqual({ ...state, event_id: undefined, occurred_at: 5, status: 'connected', previous_status: 'connecting', phone: '+5511911110001' });
    expect(event_id).toMatch(/^evt_/);
    expect(nextState(connected, { kind: 'state', status: 'connected', reason: null, phone: null }, 6)).toBeUndefined();
    expect(nextState(connected, { kind: 'state', status: 'connected', reason: 'resync', phone: null }, 7)).toMatchObject({ previous_status: null, reason: 'resync', phone: '+5511911110001' });
  });

  it('derives status and inbound event ids, so repeats collapse', () => {
    const send = { message_id: asMessageId('msg_1'), instance_id: state.instance_id, account_id: state.account_id, project_id: state.project_id, to: 'x', client_reference: null, campaign_id: null };
    const outcome = { status: 'delivered' as const, wa_message_id: 'W1', error_code: null, error_reason: null, occurred_at: 9 };
    expect(statusRecord(send, outcome).event_id).toBe(statusRecord(send, { ...outcome, occurred_at: 10 }).event_id);
    expect(statusRecord(send, outcome).event_id).not.toBe(statusRecord(send, { ...outcome, status: 'read' }).event_id);

    const fact = {
      occurred_at: 1,
      origin: 'customer' as const,
      wa_message_id: 'W2',
      chat_jid: 'c',
      sender: { jid: 'c', lid: null, name: null, phone: null },
      from: 'c',
      to: null,
      quoted_id: null,
      quoted_participant: null,
      group: null,
      mentions: [],
      content: { kind: 'text' as const, body: 'hi' },
    };
    const first = inboundRecord(state, fact);
    expect(inboundRecord(state, fact)).toEqual(first);
    expect(first).toMatchObject({ instance_id: 'inst_1', account_id: 'acc_1', wa_message_id: 'W2' });
    expect(first.event_id).toMatch(/^evt_/);
    expect(first.message_id).toMatch(/^msg_/);
  });
});

describe('KeyedSerial', () => {
  it('runs the tasks of one key in order, even after a failure, and keys side by side', async () => {
    const serial = new KeyedSerial();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const a1 = serial.run('a', async () => {
      await gate;
      order.push('a1');
      throw new Error('boom');
    });
    const a2 = serial.run('a', async () => order.push('a2'));
    await serial.run('b', async () => order.push('b1'));
    release();
    await expect(a1).rejects.toThrow('boom');
    await a2;
    await serial.drain();
    expect(order).toEqual(['b1', 'a1', 'a2']);
  });
});
