import { describe, expect, it } from 'vitest';
import { planImport, rowPhone, type ImportRow } from '../../api/contacts/import.js';
import type { ContactValues } from '../../processors/contacts/write.js';
import { CSV_HEADER, csvLine } from '../../api/contacts/csv.js';
import { sandboxChecks } from '../../connectors/sandbox/index.js';
import { contactId, isOptOutKeyword } from '../../processors/contacts/index.js';
import { phoneJid, phoneOfJid } from '../../schemas/phones.js';
import { keywordOptOutEventId } from '../../schemas/contact-ids.js';
import { keywordOptOutPhone } from '../../processors/contacts/keyword-optout.js';
import type { ContactRow } from '../../processors/contacts/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage } from '../../schemas/records.js';

describe('opt-out keywords', () => {
  it.each(['STOP', 'stop', ' Stop! ', 'Arrêt', 'ARRET.', 'sair', 'Parar', 'cancelar', 'BAJA', 'alto', 'Stopp', 'disiscrivi', 'Opt-out', 'désinscrire'])(
    'opts out on %j',
    (body) => expect(isOptOutKeyword(body)).toBe(true),
  );

  it.each(['stop sending me this', 'please stop', 'STOP STOP', 'Oi', '', '🛑', 'non'])('does not opt out on %j', (body) => {
    expect(isOptOutKeyword(body)).toBe(false);
  });
});

describe('phones', () => {
  it('turns E.164 into a phone jid and back, and nothing else into a phone', () => {
    expect(phoneJid('+5511999990000')).toBe('5511999990000@s.whatsapp.net');
    expect(phoneOfJid('5511999990000@s.whatsapp.net')).toBe('+5511999990000');
    expect(phoneOfJid('120363025246125486@g.us')).toBeUndefined();
    expect(phoneOfJid('98765432101234@lid')).toBeUndefined();
  });

  it('derives the same contact id for the same account and phone only', () => {
    expect(contactId('acc_1', '+5511999990000')).toBe(contactId('acc_1', '+5511999990000'));
    expect(contactId('acc_1', '+5511999990000')).not.toBe(contactId('acc_2', '+5511999990000'));
    expect(contactId('acc_1', '+5511999990000')).toMatch(/^ct_[a-z2-7]{16}$/);
  });

  it('derives the opt-out event id from the inbound record', () => {
    expect(keywordOptOutEventId('evt_a')).toBe(keywordOptOutEventId('evt_a'));
    expect(keywordOptOutEventId('evt_a')).not.toBe(keywordOptOutEventId('evt_b'));
    expect(keywordOptOutEventId('evt_a')).toMatch(/^evt_/);
  });
});

function inbound(overrides: Partial<InboundMessage>): InboundMessage {
  return {
    event_id: asEventId('evt_1'),
    occurred_at: 0,
    account_id: asAccountId('acc_1'),
    project_id: asProjectId('prj_1'),
    instance_id: asInstanceId('inst_1'),
    origin: 'customer',
    message_id: asMessageId('msg_1'),
    wa_message_id: 'WA1',
    chat_jid: '5511988887777@s.whatsapp.net',
    sender: { jid: '5511988887777@s.whatsapp.net', lid: null, name: 'Ana', phone: null },
    from: '5511988887777@s.whatsapp.net',
    to: null,
    quoted_id: null,
    quoted_participant: null,
    group: null,
    mentions: [],
    content: { kind: 'text', body: 'STOP' },
    ...overrides,
  };
}

describe('keyword opt-out of a received message', () => {
  it("takes the customer's phone from the sender, else from the chat jid", () => {
    expect(keywordOptOutPhone(inbound({}))).toBe('+5511988887777');
    const resolved = inbound({ chat_jid: '777@lid', sender: { jid: '777@lid', lid: '777@lid', name: null, phone: '+5511900001111' } });
    expect(keywordOptOutPhone(resolved)).toBe('+5511900001111');
  });

  it('ignores groups, the owner, other types and unresolved lids', () => {
    expect(keywordOptOutPhone(inbound({ group: { jid: '1203@g.us', name: 'G' } }))).toBeUndefined();
    expect(keywordOptOutPhone(inbound({ origin: 'external' }))).toBeUndefined();
    expect(keywordOptOutPhone(inbound({ content: { kind: 'reaction', quoted_message_id: 'X', emoji: 'STOP' } }))).toBeUndefined();
    expect(keywordOptOutPhone(inbound({ chat_jid: '777@lid', sender: { jid: '777@lid', lid: '777@lid', name: null, phone: null } }))).toBeUndefined();
  });
});

describe('import plan', () => {
  const plan = (rows: ImportRow[], existing: ReadonlyMap<string, ContactValues>, country: string | null) =>
    planImport('acc_1', rows, rows.map((row) => rowPhone(row, country)), existing);
  const existing = new Map<string, ContactValues>([
    ['+5511900000001', { id: 'ct_one', phone: '+5511900000001', name: 'One', tags: ['vip'], time_zone: null }],
    ['+5511900000002', { id: 'ct_two', phone: '+5511900000002', name: 'Two', tags: [], time_zone: null }],
  ]);

  it('counts created, updated, unchanged and invalid rows, and lists the invalid ones', () => {
    const planned = plan([
      { phone: '+55 11 90000-0001', name: 'One' },
      { phone: '+5511900000002', name: 'Deux' },
      { phone: '+5511900000003', tags: [' new ', 'new', ''] },
      { phone: 'not a phone' },
    ], existing, null);
    expect(planned).toMatchObject({ created: 1, updated: 1, unchanged: 1, invalidRows: [{ index: 3, phone: 'not a phone', reason: 'invalid_phone', problem: 'not_a_number' }] });
    expect(planned.upserts).toEqual([
      { id: 'ct_two', phone: '+5511900000002', name: 'Deux', tags: [], time_zone: null },
      { id: contactId('acc_1', '+5511900000003'), phone: '+5511900000003', name: null, tags: ['new'], time_zone: null },
    ]);
  });

  it('keeps fields a row leaves out, and clears a name given empty', () => {
    const planned = plan([{ phone: '+5511900000001', name: ' ' }], existing, null);
    expect(planned.upserts).toEqual([{ id: 'ct_one', phone: '+5511900000001', name: null, tags: ['vip'], time_zone: null }]);
  });

  it('sets a time zone, keeps it when a row leaves it out, clears it given empty', () => {
    const zoned = plan([{ phone: '+5511900000002', time_zone: 'Europe/Lisbon' }], existing, null);
    expect(zoned).toMatchObject({ updated: 1, upserts: [{ id: 'ct_two', time_zone: 'Europe/Lisbon', name: 'Two' }] });
    const after = new Map([...existing, ['+5511900000002', zoned.upserts[0]!] as const]);
    expect(plan([{ phone: '+5511900000002', name: 'Two' }], after, null)).toMatchObject({ unchanged: 1 });
    expect(plan([{ phone: '+5511900000002', time_zone: '' }], after, null).upserts).toMatchObject([{ time_zone: null }]);
  });

  it('applies a phone repeated in one import over its earlier row', () => {
    const planned = plan([{ phone: '+5511900000009', name: 'A' }, { phone: '+5511900000009', name: 'B' }, { phone: '+5511900000009', name: 'B' }], new Map(), null);
    expect(planned).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
    expect(planned.upserts.map((c) => c.name)).toEqual(['A', 'B']);
  });

  it("reads national phones in the row's country, else the import's, and lists each impossible one with its problem", () => {
    const planned = plan([
      { phone: '(11) 90000-0001', name: 'One again' },
      { phone: '07400 123456', country: 'GB' },
      { phone: '+1 555 000 1111' },
      { phone: '11 9000' },
      { phone: '(11) 90000-0009', country: 'XX' },
      { phone: '+55 11 90000-0002', country: 'DE' },
    ], existing, 'BR');
    expect(planned.invalidRows).toEqual([
      { index: 2, phone: '+1 555 000 1111', reason: 'invalid_phone', problem: 'invalid_for_region' },
      { index: 3, phone: '11 9000', reason: 'invalid_phone', problem: 'too_short' },
      { index: 4, phone: '(11) 90000-0009', reason: 'invalid_phone', problem: 'unknown_country' },
    ]);
    expect(planned.upserts.map((c) => c.phone)).toEqual(['+5511900000001', '+447400123456']);
    expect(planned).toMatchObject({ created: 1, updated: 1, unchanged: 1 });
  });

  it('needs a country for a national phone', () => {
    expect(plan([{ phone: '(11) 90000-0001' }], existing, null).invalidRows).toEqual([
      { index: 0, phone: '(11) 90000-0001', reason: 'invalid_phone', problem: 'missing_country' },
    ]);
  });
});

describe('CSV export', () => {
  const row: ContactRow = {
    contact_id: 'ct_x',
    account_id: 'acc_1',
    phone: '+5511900000001',
    name: 'Silva, "Ana"',
    tags: ['vip', 'sp'],
    time_zone: null,
    opted_out: true,
    opted_out_at: new Date('2026-01-02T03:04:05.000Z'),
    opt_out_source: 'api',
    created_at: new Date('2026-01-01T00:00:00.000Z'),
    updated_at: new Date('2026-01-02T03:04:05.000Z'),
  };

  it('quotes fields that need it, and leaves phones as they are', () => {
    expect(CSV_HEADER).toBe('id,phone,name,tags,opted_out,opted_out_at,opt_out_source,created_at,updated_at\r\n');
    expect(csvLine(row)).toBe(
      'ct_x,+5511900000001,"Silva, ""Ana""",vip;sp,true,2026-01-02T03:04:05.000Z,api,2026-01-01T00:00:00.000Z,2026-01-02T03:04:05.000Z\r\n',
    );
  });

  it('keeps spreadsheets from running names as formulas', () => {
    expect(csvLine({ ...row, name: '=HYPERLINK("x")', tags: [] })).toContain(`,"'=HYPERLINK(""x"")",,`);
  });
});

describe('sandbox network', () => {
  it('puts phones ending 9999 off the network and keeps lids', async () => {
    expect(sandboxChecks(['+5511988887777', '+5511900009999', '123456@lid'])).toEqual([
      { phone: '+5511988887777', on_network: true, jid: '5511988887777@s.whatsapp.net', lid: null },
      { phone: '+5511900009999', on_network: false, jid: null, lid: null },
      { phone: '123456@lid', on_network: true, jid: '123456@lid', lid: '123456@lid' },
    ]);
  });
});
