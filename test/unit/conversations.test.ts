import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, paginate } from '../../api/conversations/cursor.js';
import { messageOut } from '../../api/conversations/render.js';
import { GatewayError } from '../../api/errors.js';
import { inboundContent, sendContent } from '../../events/content.js';
import { maskedOtpBody } from '../../events/otp.js';
import { inboundRow, sendRow } from '../../processors/conversations/rows.js';
import type { StoredMessage } from '../../processors/conversations/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage, SendCommand } from '../../schemas/records.js';

const media = { id: 'b8c1f0a2-0000-4000-8000-000000000001', mime_type: 'image/jpeg', filename: 'a.jpg', size: 1234, storage_key: 'k', sha256: 'h' };

describe('OTP transcript', () => {
  it('replaces a code the context text repeats by its mask', () => {
    expect(maskedOtpBody('Use 482913 to sign in. Not 12482913 or 4829.', '••••13')).toBe('Use ••••13 to sign in. Not 12482913 or 4829.');
    expect(maskedOtpBody('Your code expires in 10 minutes.', '••••13')).toBe('Your code expires in 10 minutes.');
  });

  it('keeps the context text and the masked code only', () => {
    const columns = sendContent({ kind: 'otp', code_masked: '••••13', code_ciphertext: 'sealed', expiry_minutes: 10, body: 'Code 482913' });
    expect(columns).toMatchObject({ type: 'otp', body: 'Code ••••13', code_masked: '••••13' });
    expect(JSON.stringify(columns)).not.toContain('482913');
    expect(JSON.stringify(columns)).not.toContain('sealed');
  });
});

describe('message content', () => {
  it('gives each received type its public body and fields', () => {
    expect(inboundContent({ kind: 'image', media, caption: 'look' })).toMatchObject({
      type: 'image', body: 'look', media_id: media.id, media_mime_type: 'image/jpeg', media_filename: 'a.jpg', media_size: 1234,
    });
    expect(inboundContent({ kind: 'audio', media: null, ptt: true })).toMatchObject({ type: 'audio', body: null, media_id: null });
    expect(inboundContent({ kind: 'location', latitude: -23.5, longitude: -46.6, name: 'Paulista', address: null })).toMatchObject({
      body: 'Paulista', latitude: -23.5, longitude: -46.6,
    });
    expect(inboundContent({ kind: 'contact', contact_name: 'Bia', contact_vcard: 'BEGIN:VCARD' }).body).toBe('Bia');
    expect(inboundContent({ kind: 'reaction', quoted_message_id: 'WA9', emoji: '👍' }).body).toBe('👍');
    expect(inboundContent({ kind: 'poll', name: 'Lunch?', options: ['yes', 'no'], selectable_count: 1, message_secret: Buffer.from('s') })).toMatchObject({
      body: 'Lunch?', poll_name: 'Lunch?', poll_options: ['yes', 'no'],
    });
    expect(inboundContent({ kind: 'poll_vote', poll_message_id: 'WAP', selected: ['yes', 'maybe'] })).toMatchObject({
      body: 'yes, maybe', vote_poll_message_id: 'WAP', vote_selected: ['yes', 'maybe'],
    });
  });

  it('keeps no URL of a sent media', () => {
    const columns = sendContent({ kind: 'document', media: { url: 'https://example.com/x.pdf', media_ref: null, mime_type: 'application/pdf', filename: 'x.pdf' }, caption: null });
    expect(columns).toMatchObject({ type: 'document', media_id: null, media_mime_type: 'application/pdf', media_filename: 'x.pdf' });
    expect(JSON.stringify(columns)).not.toContain('example.com');
  });
});

const base = {
  event_id: asEventId('evt_1'),
  occurred_at: Date.UTC(2026, 0, 1),
  account_id: asAccountId('acc_1'),
  project_id: asProjectId('prj_1'),
  instance_id: asInstanceId('inst_1'),
};

describe('message rows', () => {
  it('files a send under its recipient, queued', () => {
    const command: SendCommand = {
      ...base, message_id: asMessageId('msg_1'), client_reference: 'ref', to: '5511988887777@s.whatsapp.net', origin: 'api',
      campaign_id: null, idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: [], content: { kind: 'reaction', quoted_message_id: 'WA7', emoji: '❤️' },
    };
    expect(sendRow(command)).toMatchObject({
      jid: '5511988887777@s.whatsapp.net', direction: 'out', status: 'queued', queued_at: new Date(base.occurred_at), quoted_id: 'WA7', client_reference: 'ref',
    });
  });

  it('names a conversation after the group, or the customer, never after the owner', () => {
    const message: InboundMessage = {
      ...base, origin: 'customer', message_id: asMessageId('msg_2'), wa_message_id: 'WA2', chat_jid: '1203@g.us',
      sender: { jid: '5511988887777@s.whatsapp.net', lid: null, name: 'Ana', phone: null }, from: '1203@g.us', to: null,
      quoted_id: null, quoted_participant: null, group: { jid: '1203@g.us', name: 'Team' }, mentions: [], content: { kind: 'text', body: 'hi' },
    };
    expect(inboundRow(message)).toMatchObject({ jid: '1203@g.us', direction: 'in', chat_name: 'Team' });
    expect(inboundRow({ ...message, chat_jid: '5511988887777@s.whatsapp.net', group: null }).chat_name).toBe('Ana');
    expect(inboundRow({ ...message, origin: 'external', group: null })).toMatchObject({ direction: 'out', chat_name: null });
  });
});

describe('cursors', () => {
  it('round-trips the sort key', () => {
    const key = { at: new Date('2026-01-01T00:00:00.123Z'), id: '5511@s.whatsapp.net' };
    expect(decodeCursor(encodeCursor(key))).toEqual(key);
  });

  it.each(['', 'x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["nope","a"]').toString('base64url')])(
    'refuses %j with invalid_request',
    (cursor) => {
      expect(() => decodeCursor(cursor)).toThrow(GatewayError);
      try {
        decodeCursor(cursor);
      } catch (error) {
        expect((error as GatewayError).code).toBe('invalid_request');
      }
    },
  );

  it('gives a next cursor only when another page follows', () => {
    const rows = [1, 2, 3].map((n) => ({ at: new Date(n), id: String(n) }));
    expect(paginate(rows, 2, (r) => r)).toEqual({ items: rows.slice(0, 2), next_cursor: encodeCursor(rows[1]!) });
    expect(paginate(rows, 3, (r) => r)).toEqual({ items: rows, next_cursor: null });
  });
});

describe('history items', () => {
  const stored: StoredMessage = {
    message_id: 'msg_1', instance_id: 'inst_1', jid: '5511@s.whatsapp.net', direction: 'in', origin: 'customer', type: 'image',
    body: null, media_id: media.id, media_mime_type: 'image/jpeg', media_filename: null, media_size: '1234',
    latitude: null, longitude: null, poll_name: null, poll_options: null, vote_poll_message_id: null, vote_selected: null,
    code_masked: null, occurred_at: new Date(0), wa_message_id: 'WA1', quoted_id: null, quoted_participant: null,
    sender_jid: '5511@s.whatsapp.net', sender_lid: null, sender_name: 'Ana', from_jid: '5511@s.whatsapp.net', to_jid: null,
    group_jid: null, group_name: null, mentions: [], status: null, queued_at: null, sent_at: null, delivered_at: null,
    read_at: null, failed_at: null, error_code: null, client_reference: null, change_kind: null, change_body: null, changed_at: null,
  };

  it('signs media urls at read time and leaves out what a message lacks', async () => {
    const item = await messageOut(stored, async (id) => `https://media.example/${id}?sig=1`);
    expect(item.media).toEqual({ id: media.id, url: `https://media.example/${media.id}?sig=1`, mime_type: 'image/jpeg', filename: null, size: 1234 });
    expect(item.status).toBeUndefined();
    expect(item.poll).toBeUndefined();
    expect((await messageOut(stored)).media?.url).toBeUndefined();
  });
});
