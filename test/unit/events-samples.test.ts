import { describe, expect, it } from 'vitest';
import { accountEventTypes, isStreamOnly, webhookEventTypes, type WebhookEventType } from '../../events/catalogue.js';
import { envelopeOf } from '../../events/envelope.js';
import { advisoryEvents, callEvents, campaignPausedEvent, groupEvent, inboundEvent, instanceEvents, optedOutEvent, statusEvent, thresholdEvent } from '../../events/renderers/index.js';
import { sampleEvent } from '../../events/samples.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { GroupEventKind, InboundMessage, InstanceStatus, PublicEvent, SendStatus } from '../../schemas/records.js';

const owner = { accountId: 'acc_9', projectId: 'prj_9', instanceId: 'inst_9' };
const keysOf = (event: PublicEvent) => Object.keys(JSON.parse(event.payload_json) as object).sort();

/** The payload fields of each webhook event, as the README documents them (the sample's variant where there are several). */
const documented: Record<WebhookEventType, string[]> = {
  'message.received': ['type', 'message_id', 'wa_message_id', 'from', 'body'],
  'message.sent': ['origin', 'message_id', 'wa_message_id', 'to', 'status'],
  'message.delivered': ['origin', 'message_id', 'wa_message_id', 'to', 'status'],
  'message.read': ['origin', 'message_id', 'wa_message_id', 'to', 'status'],
  'message.failed': ['origin', 'message_id', 'wa_message_id', 'to', 'status', 'error_code'],
  'message.edited': ['origin', 'message_id', 'wa_message_id', 'from', 'chat', 'body'],
  'message.deleted': ['origin', 'message_id', 'wa_message_id', 'from', 'chat'],
  'instance.connected': ['status', 'previous_status', 'phone', 'nickname', 'reason', 'health_score'],
  'instance.warming': ['status', 'previous_status', 'phone', 'nickname', 'reason', 'health_score'],
  'instance.disconnected': ['status', 'previous_status', 'phone', 'nickname', 'reason', 'health_score'],
  'instance.logged_out': ['status', 'previous_status', 'phone', 'nickname', 'reason', 'health_score'],
  'instance.banned': ['status', 'previous_status', 'phone', 'nickname', 'reason', 'health_score'],
  'group.joined': ['author'],
  'group.left': ['author'],
  'group.participant_added': ['author', 'participants'],
  'group.participant_removed': ['author', 'participants'],
  'group.participant_promoted': ['author', 'participants'],
  'group.participant_demoted': ['author', 'participants'],
  'group.subject_changed': ['author', 'subject'],
  'group.description_changed': ['author', 'description'],
  'contact.opted_out': ['source', 'phone', 'contact_id'],
  'campaign.paused': ['campaign_id', 'name', 'reason', 'scope', 'instance_id', 'figures', 'thresholds', 'paused_at'],
  'usage.threshold': ['percent', 'used', 'included', 'plan', 'allowance'],
  'advisory.published': ['advisory_id', 'title', 'impact', 'action', 'link', 'published_at'],
  'call.received': ['call_id', 'from', 'is_video', 'offline'],
};

/** Real renderings from facts written independently of the samples. */
function realRendering(type: WebhookEventType): PublicEvent | undefined {
  const ids = {
    event_id: asEventId('evt_real'),
    occurred_at: 1_700_000_000_000,
    account_id: asAccountId('acc_1'),
    project_id: asProjectId('prj_1'),
    instance_id: asInstanceId('inst_1'),
  };
  const person = { jid: '5511988887777@s.whatsapp.net', lid: null, name: 'Ana', phone: '+5511988887777' };
  const message: InboundMessage = {
    ...ids,
    origin: 'customer',
    message_id: asMessageId('msg_1'),
    wa_message_id: 'WA1',
    chat_jid: person.jid,
    sender: person,
    from: person.jid,
    to: null,
    quoted_id: null,
    quoted_participant: null,
    group: null,
    mentions: [],
    content: { kind: 'text', body: 'STOP' },
  };
  const [family, name] = type.split('.') as [string, string];
  switch (family) {
    case 'message':
      if (type === 'message.received') return inboundEvent(message, (id) => id);
      if (type === 'message.edited') return inboundEvent({ ...message, content: { kind: 'edit', quoted_message_id: 'WA0', body: 'fixed' } }, (id) => id);
      if (type === 'message.deleted') return inboundEvent({ ...message, content: { kind: 'delete', quoted_message_id: 'WA0' } }, (id) => id);
      return statusEvent({
        ...ids, message_id: asMessageId('msg_2'), wa_message_id: 'WA2', client_reference: null, campaign_id: null, to: person.jid,
        status: name as SendStatus, error_code: name === 'failed' ? 'not_connected' : null, error_reason: null,
      });
    case 'instance':
      return instanceEvents({
        ...ids, phone: '+5511955550000', nickname: null, status: name as InstanceStatus, previous_status: 'pending',
        reason: null, health_score: 100, pool_ids: [], connector: 'baileys', deleted: false,
      })[0];
    case 'group':
      return groupEvent({
        ...ids, kind: name as GroupEventKind, group: { jid: '1@g.us', name: null }, author: null,
        participants: [person], subject: 'S', description: 'D',
      });
    case 'contact':
      return optedOutEvent(message, { id: 'ct_1', phone: person.phone }, ids.event_id);
    case 'usage':
      return thresholdEvent({ accountId: ids.account_id, period: '2026-03-01', allowance: 'media_storage', percent: 90, used: 9, included: 10, plan: 'pro', occurredAt: 0 });
    case 'advisory':
      return advisoryEvents({ accounts: ['acc_1'], title: 't', impact: 'i', action: 'a', link: 'https://x.test' }, 'adv_1', 0)[0];
    case 'call':
      return callEvents({ ...ids, call_id: 'C1', status: 'offer', caller: person, is_video: true, group_jid: null, offline: false, by_us: false })[0];
    case 'campaign':
      return campaignPausedEvent(
        {
          event_id: ids.event_id, occurred_at: 0, account_id: ids.account_id, project_id: ids.project_id, campaign_id: 'cmp_1', name: 'Spring', status: 'paused',
          message_type: 'text', content: { kind: 'text', body: 'hi' }, time_zone: 'UTC', start_at: null, hours_from: null, hours_to: null, instance_ids: [], pool_id: null,
          pace_per_minute: 60, recipients: 1, chunks: 1, invalid_rows: 0, pause_reason: 'failure_rate', created_at: 0, started_at: 0, paused_at: 0, ended_at: null,
        },
        { reason: 'failure_rate', scope: 'campaign', instance_id: null, figures: { sends: 120, failed: 30, rate: 0.25 }, thresholds: { window_sends: 200, min_sample: 50, limit: 0.15 } },
      );
    default:
      return undefined;
  }
}

describe('sampleEvent', () => {
  it.each(webhookEventTypes)('%s has a sample shaped like the real event', (type) => {
    const sample = sampleEvent(type, owner, 'test', 'wh_1');
    expect(sample.event_type).toBe(type);
    expect(isStreamOnly(sample.event_type)).toBe(false);
    expect(keysOf(sample)).toEqual([...documented[type]].sort());
    const real = realRendering(type);
    expect(keysOf(real!)).toEqual(keysOf(sample));
    expect(() => envelopeOf(sample)).not.toThrow();
  });

  it('marks the trigger and the test webhook, with a fresh evt_ id each call', () => {
    const test = sampleEvent('message.received', owner, 'test', 'wh_1');
    const manual = sampleEvent('message.received', owner, 'manual');
    expect(test).toMatchObject({ trigger: 'test', webhook_id: 'wh_1' });
    expect(manual).toMatchObject({ trigger: 'manual', webhook_id: null });
    expect(test.event_id).toMatch(/^evt_/);
    expect(test.event_id).not.toBe(manual.event_id);
    expect(sampleEvent('message.received', owner, 'test').event_id).not.toBe(sampleEvent('message.received', owner, 'test').event_id);
  });

  it('belongs to the owner: project events to the project and number, account events to the account alone', () => {
    for (const type of webhookEventTypes) {
      const sample = sampleEvent(type, owner, 'manual');
      expect(sample.account_id).toBe('acc_9');
      if (accountEventTypes.has(type)) {
        expect(sample).toMatchObject({ scope: 'account', project_id: null, instance_id: null });
      } else {
        expect(sample).toMatchObject({ scope: 'project', project_id: 'prj_9' });
        if (type !== 'campaign.paused') expect(sample.instance_id).toBe('inst_9');
      }
    }
  });

  it('uses a clearly fake number when the project has none', () => {
    expect(sampleEvent('instance.connected', { accountId: 'acc_9', projectId: 'prj_9' }, 'manual').instance_id).toBe('inst_sample');
  });

  it('uses fake people: reserved 555-01xx phones', () => {
    const body = JSON.stringify(envelopeOf(sampleEvent('message.received', owner, 'test'), 'partner'));
    expect(body).toContain('+15555550123');
    expect(body).toContain('Sample Customer');
  });
});
