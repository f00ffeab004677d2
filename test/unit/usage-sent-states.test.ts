import { describe, expect, it } from 'vitest';
import { sentUsage } from '../../processors/usage/rows.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { MessageRowState, MessageState } from '../../schemas/records.js';

const T0 = Date.UTC(2026, 10, 2, 12);

const row = (fields: Partial<MessageRowState>): MessageRowState => ({
  jid: '5511911113001@s.whatsapp.net', direction: 'out', origin: 'api', type: 'text', body: 'hi', media_id: null, media_mime_type: null, media_filename: null,
  media_size: null, latitude: null, longitude: null, poll_name: null, poll_options: null, vote_poll_message_id: null, vote_selected: null, code_masked: null,
  occurred_at: T0, wa_message_id: null, quoted_id: null, quoted_participant: null, sender_jid: null, sender_lid: null, sender_name: null, from_jid: null,
  to_jid: null, group_jid: null, group_name: null, chat_name: null, mentions: [], status: 'queued', queued_at: T0, sent_at: null, delivered_at: null,
  read_at: null, failed_at: null, error_code: null, client_reference: null, ...fields,
});

const state = (message: MessageRowState | null, change: MessageState['change'] = null, account: string | null = 'acc_states'): MessageState => ({
  event_id: asEventId('evt_state'), occurred_at: T0 + 9, account_id: account === null ? null : asAccountId(account), project_id: asProjectId('prj_states'),
  instance_id: asInstanceId('inst_states'), message_id: asMessageId('msg_states'), message, change, error_reason: null, campaign_id: null,
});

const counted = (occurredAt: number) => ({
  event_id: 'msg_states', account_id: 'acc_states', project_id: 'prj_states', instance_id: 'inst_states', kind: 'message_sent', quantity: 1, occurred_at: occurredAt,
});

/** The sends a replay counts from the history's changelog are those the send commands counted. */
describe('usage: the sends of gw.messages.state', () => {
  it('counts our sends of origin api and campaign at the time of their command', () => {
    expect(sentUsage(state(row({ status: 'read', read_at: T0 + 5 })))).toEqual(counted(T0));
    expect(sentUsage(state(row({ origin: 'campaign', type: 'image' })))).toEqual(counted(T0));
  });

  it('counts our edit or deletion once a status fact gave it a row, at the time of the change', () => {
    const edit = { target_wa_id: 'WA_1', change_kind: 'edit', body: 'fixed', occurred_at: T0 + 2 };
    expect(sentUsage(state(row({ origin: null, type: null, occurred_at: T0 + 3, status: 'sent' }), edit))).toEqual(counted(T0 + 2));
  });

  it('counts no received message, owner\'s message from the phone, received change or row of status facts only', () => {
    expect(sentUsage(state(row({ direction: 'in', origin: 'customer' })))).toBeUndefined();
    expect(sentUsage(state(row({ direction: 'out', origin: 'external' })))).toBeUndefined();
    expect(sentUsage(state(null, { target_wa_id: 'WA_2', change_kind: 'delete', body: null, occurred_at: T0 }, null))).toBeUndefined();
    expect(sentUsage(state(row({ origin: null, type: null, status: 'sent' })))).toBeUndefined();
  });
});
