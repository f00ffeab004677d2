import { randomBytes } from 'node:crypto';
import { contactId } from '../schemas/contact-ids.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId, type WebhookId } from '../schemas/ids.js';
import type { GroupEventKind, InboundMessage, InstanceState, InstanceStatus, MessageStatus, PublicEvent, SendStatus } from '../schemas/records.js';
import type { WebhookEventType } from './catalogue.js';
import type { CampaignPausedPayload } from './payloads.js';
import { advisoryEvents, callEvents, groupEvent, inboundEvent, instanceEvents, optedOutEvent, scheduledEvent, statusEvent, thresholdEvent } from './renderers/index.js';

export interface SampleOwner {
  readonly accountId: string;
  readonly projectId: string;
  /** The number a sample is about; a clearly fake one when the project has none. */
  readonly instanceId?: string;
}

/**
 * A sample of a webhook event for `POST /webhooks/{id}/test` and `POST /webhooks/trigger`: fake
 * people and ids (phones of the reserved +1 555 01xx range, `SAMPLE` network ids) put through
 * the same renderers as real facts, so a receiver sees exactly the shape it will get. Every call
 * has a fresh event id.
 */
export function sampleEvent(eventType: WebhookEventType, owner: SampleOwner, trigger: 'test' | 'manual', webhookId?: string): PublicEvent {
  const now = Date.now();
  return {
    ...rendered(eventType, facts(owner, now)),
    event_id: asEventId(newId('evt')),
    occurred_at: now,
    trigger,
    webhook_id: webhookId === undefined ? null : (webhookId as WebhookId),
  };
}

const SAMPLE_INSTANCE = 'inst_sample';
const customer = { jid: '15555550123@s.whatsapp.net', lid: '987654321012345@lid', name: 'Sample Customer', phone: '+15555550123' };
const colleague = { jid: '15555550142@s.whatsapp.net', lid: null, name: 'Sample Colleague', phone: '+15555550142' };
const group = { jid: '120363000000000000@g.us', name: 'Sample Group' };
const numberPhone = '+15555550100';

type Facts = ReturnType<typeof facts>;

function facts(owner: SampleOwner, now: number) {
  const ids = {
    event_id: asEventId('evt_sample'),
    occurred_at: now,
    account_id: asAccountId(owner.accountId),
    project_id: asProjectId(owner.projectId),
    instance_id: asInstanceId(owner.instanceId ?? SAMPLE_INSTANCE),
  };
  const waId = () => `SAMPLE${randomBytes(8).toString('hex').toUpperCase()}`;

  const inbound = (content: InboundMessage['content']): InboundMessage => ({
    ...ids,
    origin: 'customer',
    message_id: asMessageId(newId('msg')),
    wa_message_id: waId(),
    chat_jid: customer.jid,
    sender: customer,
    from: customer.jid,
    to: null,
    quoted_id: null,
    quoted_participant: null,
    group: null,
    mentions: [],
    content,
  });

  const status = (value: SendStatus): MessageStatus => ({
    ...ids,
    message_id: asMessageId(newId('msg')),
    wa_message_id: value === 'failed' ? null : waId(),
    client_reference: 'sample-order-42',
    campaign_id: null,
    to: customer.jid,
    status: value,
    error_code: value === 'failed' ? 'delivery_failed' : null,
    error_reason: null,
  });

  const instance = (value: InstanceStatus, previous: InstanceStatus, reason: string | null): InstanceState => ({
    ...ids,
    phone: numberPhone,
    nickname: 'Sample number',
    status: value,
    previous_status: previous,
    reason,
    health_score: value === 'banned' ? 0 : 100,
    pool_ids: [],
    connector: 'sandbox',
    deleted: false,
  });

  const groupFact = (kind: GroupEventKind) => ({
    ...ids,
    kind,
    group,
    author: customer.jid,
    participants: kind.startsWith('participant_') ? [colleague] : [],
    subject: kind === 'subject_changed' ? group.name : null,
    description: kind === 'description_changed' ? 'A sample group description' : null,
  });

  return { ids, now, inbound, status, instance, groupFact };
}

/** The media links of samples are never followed: there is no such media. */
const sampleMediaUrl = (mediaId: string) => `https://gateway.invalid/media/${mediaId}?exp=0&sig=sample`;

function rendered(eventType: WebhookEventType, f: Facts): PublicEvent {
  switch (eventType) {
    case 'message.received':
      return inboundEvent(f.inbound({ kind: 'text', body: 'Hello! This is a sample message.' }), sampleMediaUrl);
    case 'message.edited':
      return inboundEvent(f.inbound({ kind: 'edit', quoted_message_id: 'SAMPLEEDITED0001', body: 'Hello! This is the corrected sample message.' }), sampleMediaUrl);
    case 'message.deleted':
      return inboundEvent(f.inbound({ kind: 'delete', quoted_message_id: 'SAMPLEDELETED001' }), sampleMediaUrl);
    case 'message.sent':
    case 'message.delivered':
    case 'message.read':
    case 'message.failed':
      return statusEvent(f.status(eventType.slice('message.'.length) as SendStatus));
    case 'instance.connected':
      return instanceEvent(f.instance('connected', 'connecting', null));
    case 'instance.warming':
      return instanceEvent(f.instance('warming', 'connected', 'sample: new number warming up'));
    case 'instance.disconnected':
      return instanceEvent(f.instance('disconnected', 'connected', 'sample: connection lost'));
    case 'instance.logged_out':
      return instanceEvent(f.instance('logged_out', 'connected', 'sample: logged out from the phone'));
    case 'instance.banned':
      return instanceEvent(f.instance('banned', 'connected', 'sample: banned by the network'));
    case 'group.joined':
    case 'group.left':
    case 'group.participant_added':
    case 'group.participant_removed':
    case 'group.participant_promoted':
    case 'group.participant_demoted':
    case 'group.subject_changed':
    case 'group.description_changed':
      return groupEvent(f.groupFact(eventType.slice('group.'.length) as GroupEventKind));
    case 'contact.opted_out':
      return optedOutEvent(f.inbound({ kind: 'text', body: 'STOP' }), { id: contactId(f.ids.account_id, customer.phone), phone: customer.phone }, f.ids.event_id);
    case 'campaign.paused':
      return campaignPausedSample(f);
    case 'usage.threshold':
      return thresholdEvent({
        accountId: f.ids.account_id,
        // The usage period (month) of now; it only feeds the event id, which every sample replaces.
        period: `${new Date(f.now).toISOString().slice(0, 7)}-01`,
        allowance: 'messages',
        percent: 80,
        used: 800,
        included: 1_000,
        plan: 'free',
        occurredAt: f.now,
      });
    case 'advisory.published':
      return advisoryEvents(
        {
          accounts: [f.ids.account_id],
          title: 'Sample advisory',
          impact: 'Nothing changes: this is a sample.',
          action: 'No action needed.',
          link: 'https://gateway.invalid/advisories/sample',
        },
        newId('adv'),
        f.now,
      )[0]!;
    case 'call.received':
      return callEvents({ ...f.ids, call_id: 'SAMPLE0F3C1A2B4D5E6F708192A3B4C5D6E7F8', status: 'offer', caller: customer, is_video: false, group_jid: null, offline: false, by_us: false })[0]!;
  }
}

/** The webhook event of a status change (the stream-only instance.status comes with it). */
function instanceEvent(state: InstanceState): PublicEvent {
  return instanceEvents(state).find((event) => event.event_type === `instance.${state.status}`)!;
}

/** The autopilot pausing a campaign as one of its numbers' recipients start blocking it. */
function campaignPausedSample(f: Facts): PublicEvent {
  const payload: CampaignPausedPayload = {
    campaign_id: newId('cmp'),
    name: 'Sample campaign',
    reason: 'block_rate',
    scope: 'number',
    instance_id: f.ids.instance_id,
    figures: { sends: 140, blocked: 5, rate: 0.0357 },
    thresholds: { window_sends: 200, min_sample: 100, limit: 0.03, max_count: 5 },
    paused_at: new Date(f.now).toISOString(),
  };
  return scheduledEvent({ ...f.ids, instance_id: null, event_type: 'campaign.paused', payload });
}
