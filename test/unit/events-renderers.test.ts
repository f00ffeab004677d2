import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envelopeBody, envelopeOf } from '../../events/envelope.js';
import { eventKey } from '../../events/publish.js';
import { advisoryEvents, groupEvent, inboundEvent, instanceEvents, instanceStatusEventId, pairingEvent, statusEvent } from '../../events/renderers/index.js';
import { checkedAdvisory, eventsProjection } from '../../processors/events/index.js';
import { projectionsFor, replayable } from '../../processors/index.js';
import type { Applied } from '../../processors/runtime/projection.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { GroupEvent, InboundMessage, InstanceState, Media, MessageStatus, PairingChallenge, PublicEvent } from '../../schemas/records.js';
import { GatewayFailure, topicName, topics, type Producer, type TopicSpec } from '../../topics/index.js';

const owner = {
  occurred_at: Date.UTC(2026, 2, 1, 12, 0, 0),
  account_id: asAccountId('acc_1'),
  project_id: asProjectId('prj_1'),
  instance_id: asInstanceId('inst_1'),
};
const ana = { jid: '5511988887777@s.whatsapp.net', lid: '123456789012345@lid', name: 'Ana', phone: '+5511988887777' };
const mediaUrl = (id: string) => `https://api.test/media/${id}?exp=1&sig=s`;
const payloadOf = (event: PublicEvent) => JSON.parse(event.payload_json) as Record<string, unknown>;

function inbound(overrides: Partial<InboundMessage> = {}): InboundMessage {
  return {
    ...owner,
    event_id: asEventId('evt_in_1'),
    origin: 'customer',
    message_id: asMessageId('msg_1'),
    wa_message_id: 'WA1',
    chat_jid: ana.jid,
    sender: ana,
    from: ana.jid,
    to: null,
    quoted_id: null,
    quoted_participant: null,
    group: null,
    mentions: [],
    content: { kind: 'text', body: 'Hi' },
    ...overrides,
  };
}

const photo: Media = { id: '0b9f3c1e-8a55-4a43-9d5a-2f0c1d6b7a10', mime_type: 'image/jpeg', filename: 'p.jpg', size: 2048, storage_key: 'media/x', sha256: 'ab' };

describe('message.received', () => {
  const received = (content: InboundMessage['content'], overrides: Partial<InboundMessage> = {}) => {
    const event = inboundEvent(inbound({ content, ...overrides }), mediaUrl);
    expect(event.event_type).toBe('message.received');
    return payloadOf(event);
  };
  const base = { message_id: 'msg_1', wa_message_id: 'WA1', from: ana.jid };

  it('renders each content kind with the fields of spec 2.4', () => {
    expect(received({ kind: 'text', body: 'Hi' })).toEqual({ type: 'text', ...base, body: 'Hi' });
    const media = { id: photo.id, url: mediaUrl(photo.id), mime_type: 'image/jpeg', filename: 'p.jpg', size: 2048 };
    expect(received({ kind: 'image', media: photo, caption: 'Look' })).toEqual({ type: 'image', ...base, body: 'Look', media });
    expect(received({ kind: 'video', media: photo, caption: null })).toEqual({ type: 'video', ...base, body: null, media });
    expect(received({ kind: 'audio', media: photo, ptt: true })).toEqual({ type: 'audio', ...base, body: null, media });
    expect(received({ kind: 'document', media: photo, caption: 'Invoice' })).toEqual({ type: 'document', ...base, body: 'Invoice', media });
    expect(received({ kind: 'sticker', media: photo })).toEqual({ type: 'sticker', ...base, body: null, media });
    expect(received({ kind: 'location', latitude: -23.5, longitude: -46.6, name: 'Store', address: 'Praça' })).toEqual({
      type: 'location', ...base, body: 'Store', latitude: -23.5, longitude: -46.6,
    });
    expect(received({ kind: 'contact', contact_name: 'Bob', contact_vcard: 'BEGIN:VCARD' })).toEqual({ type: 'contact', ...base, body: 'Bob' });
    expect(received({ kind: 'reaction', quoted_message_id: 'WA0', emoji: '👍' }, { quoted_id: 'WA0' })).toEqual({
      type: 'reaction', ...base, body: '👍', quoted_id: 'WA0',
    });
    expect(received({ kind: 'poll_vote', poll_message_id: 'WAP', selected: ['Morning', 'Evening'] })).toEqual({
      type: 'poll_vote', ...base, body: 'Morning, Evening', poll_vote: { poll_message_id: 'WAP', selected: ['Morning', 'Evening'] },
    });
  });

  it('never carries the poll secret', () => {
    const secret = Buffer.from('super-secret-poll-key');
    const event = inboundEvent(inbound({ content: { kind: 'poll', name: 'When?', options: ['Morning', 'Evening'], selectable_count: 1, message_secret: secret } }), mediaUrl);
    expect(payloadOf(event)).toEqual({ type: 'poll', ...base, body: 'When?', poll: { name: 'When?', options: ['Morning', 'Evening'] } });
    expect(envelopeBody(event)).not.toContain(secret.toString('base64'));
    expect(envelopeBody(event)).not.toContain('message_secret');
  });

  it('leaves media out when its download failed, and carries replies', () => {
    expect(received({ kind: 'image', media: null, caption: 'Look' }, { quoted_id: 'WA0', quoted_participant: '5511900000000@s.whatsapp.net' })).toEqual({
      type: 'image', ...base, body: 'Look', quoted_id: 'WA0', quoted_participant: '5511900000000@s.whatsapp.net',
    });
  });

  it('puts sender (lid kept, phone only for partners), group and mentions on the envelope', () => {
    const inGroup = inbound({
      chat_jid: '120363000000000001@g.us',
      from: '120363000000000001@g.us',
      group: { jid: '120363000000000001@g.us', name: 'Team' },
      mentions: ['5511911112222@s.whatsapp.net'],
    });
    const event = inboundEvent(inGroup, mediaUrl);
    expect(event).toMatchObject({ event_id: 'evt_in_1', instance_id: 'inst_1', project_id: 'prj_1', scope: 'project', trigger: 'scheduled' });
    const envelope = envelopeOf(event);
    expect(envelope).toMatchObject({
      event_type: 'message.received',
      timestamp: '2026-03-01T12:00:00.000Z',
      instance_id: 'inst_1',
      sender: { jid: ana.jid, lid: ana.lid, name: 'Ana' },
      group: { jid: '120363000000000001@g.us', name: 'Team' },
      mentions: ['5511911112222@s.whatsapp.net'],
    });
    expect(envelope.sender).not.toHaveProperty('phone');
    expect(envelopeOf(event, 'partner').sender).toMatchObject({ phone: '+5511988887777' });
  });

  it('carries an unresolved lid as the sender jid', () => {
    const lidOnly = { jid: '123456789012345@lid', lid: '123456789012345@lid', name: null, phone: null };
    const event = inboundEvent(inbound({ chat_jid: lidOnly.jid, from: lidOnly.jid, sender: lidOnly }), mediaUrl);
    expect(envelopeOf(event).sender).toEqual({ jid: lidOnly.jid, lid: lidOnly.lid, name: null });
    expect(payloadOf(event).from).toBe(lidOnly.jid);
  });
});

describe('message.sent with origin external', () => {
  const own = { jid: '5511955550000@s.whatsapp.net', lid: null, name: 'Shop', phone: '+5511955550000' };
  const external = (content: InboundMessage['content'], overrides: Partial<InboundMessage> = {}) =>
    inboundEvent(inbound({ origin: 'external', sender: own, from: own.jid, to: ana.jid, content, ...overrides }), mediaUrl);

  it('has exactly the fields spec 6.1 lists', () => {
    const event = external({ kind: 'text', body: 'On my way' });
    expect(event.event_type).toBe('message.sent');
    expect(event.event_id).toBe('evt_in_1');
    expect(payloadOf(event)).toEqual({ origin: 'external', type: 'text', to: ana.jid, body: 'On my way', wa_message_id: 'WA1', message_id: 'msg_1' });
  });

  it('adds quoted_message_id on replies and media with its stable ref', () => {
    const event = external({ kind: 'document', media: photo, caption: 'Your receipt' }, { quoted_id: 'WA0' });
    expect(payloadOf(event)).toEqual({
      origin: 'external',
      type: 'document',
      to: ana.jid,
      body: 'Your receipt',
      wa_message_id: 'WA1',
      message_id: 'msg_1',
      quoted_message_id: 'WA0',
      media: { id: photo.id, url: mediaUrl(photo.id), ref: `/media/${photo.id}`, mime_type: 'image/jpeg', filename: 'p.jpg', size: 2048 },
    });
  });

  it('keeps to the listed fields for other kinds too', () => {
    expect(Object.keys(payloadOf(external({ kind: 'location', latitude: 1, longitude: 2, name: 'Here', address: null })))).toEqual([
      'origin', 'type', 'to', 'body', 'wa_message_id', 'message_id',
    ]);
  });
});

describe('message statuses', () => {
  const status = (value: MessageStatus['status'], overrides: Partial<MessageStatus> = {}): MessageStatus => ({
    ...owner,
    event_id: asEventId(`evt_st_${value}`),
    message_id: asMessageId('msg_9'),
    wa_message_id: 'WA9',
    client_reference: 'order-42',
    campaign_id: null,
    to: ana.jid,
    status: value,
    error_code: null,
    error_reason: null,
    ...overrides,
  });

  it.each(['sent', 'delivered', 'read'] as const)('message.%s echoes client_reference on the envelope', (value) => {
    const event = statusEvent(status(value));
    expect(event).toMatchObject({ event_type: `message.${value}`, event_id: `evt_st_${value}`, client_reference: 'order-42', instance_id: 'inst_1' });
    expect(payloadOf(event)).toEqual({ origin: 'api', message_id: 'msg_9', wa_message_id: 'WA9', to: ana.jid, status: value });
    expect(envelopeOf(event).client_reference).toBe('order-42');
  });

  it("a campaign's send says so: origin campaign and its campaign_id", () => {
    expect(payloadOf(statusEvent(status('delivered', { campaign_id: 'cmp_1' })))).toEqual({ origin: 'campaign', campaign_id: 'cmp_1', message_id: 'msg_9', wa_message_id: 'WA9', to: ana.jid, status: 'delivered' });
  });

  it('message.failed carries the neutral error code, never the operator detail', () => {
    const event = statusEvent(status('failed', { wa_message_id: null, error_code: 'not_connected', error_reason: 'socket closed at 10.0.0.7' }));
    expect(payloadOf(event)).toEqual({ origin: 'api', message_id: 'msg_9', wa_message_id: null, to: ana.jid, status: 'failed', error_code: 'not_connected' });
    expect(event.payload_json).not.toContain('10.0.0.7');
  });

  it('cannot carry an OTP code: the status record has no content field', () => {
    const fields = (JSON.parse(readFileSync('schemas/gateway/messages/MessageStatus.avsc', 'utf8')) as { fields: { name: string }[] }).fields.map((f) => f.name);
    expect(fields.filter((name) => /code|body|content|otp/.test(name))).toEqual(['error_code']);
    const body = envelopeBody(statusEvent(status('sent', { client_reference: null })));
    expect(body).not.toMatch(/otp|code_masked|"body"/);
  });
});

describe('instance events', () => {
  const state = (overrides: Partial<InstanceState>): InstanceState => ({
    ...owner,
    event_id: asEventId('evt_state_1'),
    phone: '+5511955550000',
    nickname: 'Sales 1',
    status: 'connected',
    previous_status: 'connecting',
    reason: null,
    health_score: 100,
    pool_ids: [],
    connector: 'sandbox',
    deleted: false,
    ...overrides,
  });

  it('a change into a status with a webhook event gives instance.<status> and the stream-only instance.status', () => {
    const events = instanceEvents(state({ status: 'disconnected', previous_status: 'connected', reason: 'connection lost', health_score: 90 }));
    expect(events.map((e) => [e.event_type, e.event_id])).toEqual([
      ['instance.disconnected', 'evt_state_1'],
      ['instance.status', instanceStatusEventId('evt_state_1')],
    ]);
    expect(payloadOf(events[0]!)).toEqual({ status: 'disconnected', previous_status: 'connected', phone: '+5511955550000', nickname: 'Sales 1', reason: 'connection lost', health_score: 90 });
    expect(payloadOf(events[1]!)).toEqual({ instance_id: 'inst_1', status: 'disconnected', previous_status: 'connected', phone: '+5511955550000', reason: 'connection lost' });
    expect(events.every((e) => e.project_id === 'prj_1' && e.instance_id === 'inst_1')).toBe(true);
  });

  it.each(['connected', 'warming', 'disconnected', 'logged_out', 'banned'] as const)('instance.%s exists', (status) => {
    expect(instanceEvents(state({ status, previous_status: 'pending' })).map((e) => e.event_type)).toEqual([`instance.${status}`, 'instance.status']);
  });

  it('a change into pending or connecting is only on the stream', () => {
    expect(instanceEvents(state({ status: 'connecting', previous_status: 'disconnected' })).map((e) => e.event_type)).toEqual(['instance.status']);
  });

  it('no change, or a deleted number, announces nothing', () => {
    expect(instanceEvents(state({ previous_status: null }))).toEqual([]);
    expect(instanceEvents(state({ deleted: true, previous_status: 'connected', status: 'disconnected' }))).toEqual([]);
  });

  it('the derived instance.status id is stable and distinct', () => {
    expect(instanceStatusEventId('evt_a')).toBe(instanceStatusEventId('evt_a'));
    expect(instanceStatusEventId('evt_a')).not.toBe(instanceStatusEventId('evt_b'));
    expect(instanceStatusEventId('evt_a')).toMatch(/^evt_[a-z2-7]{16}$/);
  });
});

describe('pairing', () => {
  const challenge = (method: PairingChallenge['method'], value: string): PairingChallenge => ({
    ...owner,
    event_id: asEventId('evt_pair_1'),
    method,
    value,
    expires_at: Date.UTC(2026, 2, 1, 12, 1, 0),
  });

  it('a QR becomes the stream-only qr_code, a code pairing_code', () => {
    const qr = pairingEvent(challenge('qr', '2@abc,def'));
    expect(qr).toMatchObject({ event_type: 'qr_code', event_id: 'evt_pair_1', project_id: 'prj_1' });
    expect(payloadOf(qr)).toEqual({ instance_id: 'inst_1', qr_code: '2@abc,def', expires_at: '2026-03-01T12:01:00.000Z' });
    const code = pairingEvent(challenge('code', 'ABCD-EFGH'));
    expect(code.event_type).toBe('pairing_code');
    expect(payloadOf(code)).toEqual({ instance_id: 'inst_1', pairing_code: 'ABCD-EFGH', expires_at: '2026-03-01T12:01:00.000Z' });
  });
});

describe('group events', () => {
  const bob = { jid: '5511911112222@s.whatsapp.net', lid: '555@lid', name: 'Bob', phone: '+5511911112222' };
  const fact = (kind: GroupEvent['kind'], overrides: Partial<GroupEvent> = {}): GroupEvent => ({
    ...owner,
    event_id: asEventId(`evt_grp_${kind}`),
    kind,
    group: { jid: '120363000000000001@g.us', name: 'Team' },
    author: ana.jid,
    participants: [],
    subject: null,
    description: null,
    ...overrides,
  });

  it('carries the group on the envelope and what changed in the payload', () => {
    const added = groupEvent(fact('participant_added', { participants: [bob] }));
    expect(added).toMatchObject({ event_type: 'group.participant_added', event_id: 'evt_grp_participant_added', group: { jid: '120363000000000001@g.us', name: 'Team' } });
    expect(payloadOf(added)).toEqual({ author: ana.jid, participants: [{ jid: bob.jid, lid: '555@lid', name: 'Bob' }] });
    expect(payloadOf(groupEvent(fact('joined')))).toEqual({ author: ana.jid });
    expect(payloadOf(groupEvent(fact('left', { author: null })))).toEqual({ author: null });
    expect(payloadOf(groupEvent(fact('subject_changed', { subject: 'New' })))).toEqual({ author: ana.jid, subject: 'New' });
    expect(payloadOf(groupEvent(fact('description_changed', { description: 'Rules' })))).toEqual({ author: ana.jid, description: 'Rules' });
    expect(envelopeOf(added).group).toEqual({ jid: '120363000000000001@g.us', name: 'Team' });
  });

  it.each(['participant_removed', 'participant_promoted', 'participant_demoted'] as const)('group.%s lists participants', (kind) => {
    expect(payloadOf(groupEvent(fact(kind, { participants: [bob] })))).toEqual({ author: ana.jid, participants: [{ jid: bob.jid, lid: '555@lid', name: 'Bob' }] });
  });
});

describe('advisories', () => {
  const input = { accounts: [' acc_1 ', 'acc_2', 'acc_1'], title: ' TLS change ', impact: 'Old clients fail', action: 'Upgrade', link: 'https://example.com/a' };

  it('checks and trims the input', () => {
    expect(checkedAdvisory(input)).toEqual({ accounts: ['acc_1', 'acc_2'], title: 'TLS change', impact: 'Old clients fail', action: 'Upgrade', link: 'https://example.com/a' });
    expect(() => checkedAdvisory({ ...input, accounts: [] })).toThrow(/--account/);
    expect(() => checkedAdvisory({ ...input, action: ' ' })).toThrow(/--action/);
    expect(() => checkedAdvisory({ ...input, link: 'javascript:alert(1)' })).toThrow(/--link/);
    expect(() => checkedAdvisory({ ...input, link: 'not a url' })).toThrow(/--link/);
  });

  it('writes one account-scope event per account, keyed by account id', () => {
    const at = Date.UTC(2026, 2, 2);
    const events = advisoryEvents(checkedAdvisory(input), 'adv_1', at);
    expect(events.map((e) => [e.account_id, e.project_id, e.instance_id, e.scope, e.event_type, eventKey(e)])).toEqual([
      ['acc_1', null, null, 'account', 'advisory.published', 'acc_1'],
      ['acc_2', null, null, 'account', 'advisory.published', 'acc_2'],
    ]);
    expect(new Set(events.map((e) => e.event_id)).size).toBe(2);
    expect(payloadOf(events[0]!)).toEqual({ advisory_id: 'adv_1', title: 'TLS change', impact: 'Old clients fail', action: 'Upgrade', link: 'https://example.com/a', published_at: '2026-03-02T00:00:00.000Z' });
    expect(envelopeOf(events[0]!)).not.toHaveProperty('instance_id');
  });
});

describe('the events projection', () => {
  interface Sent { topic: string; key: string; value: PublicEvent }
  function recordingProducer(sent: Sent[][]): Producer {
    return {
      async send<V>(spec: TopicSpec<V>, records: readonly { key: string; value: V | null }[]) {
        sent.push(records.map((r) => ({ topic: topicName(spec, ''), key: r.key, value: r.value as PublicEvent })));
        return new Map();
      },
      sendRaw: async () => undefined,
      disconnect: async () => undefined,
    };
  }
  const meta = (offset: number) => ({ topic: 'gw.messages.inbound', partition: 0, offset, key: 'inst_1', timestamp: 0 });

  it('sends a batch of facts as one write to gw.events keyed by project, skipping tombstones', async () => {
    const sent: Sent[][] = [];
    const projection = eventsProjection({ producer: recordingProducer(sent), mediaLinks: { mediaUrl } });
    expect(projection).toMatchObject({ name: 'events', ddl: [] });
    const handler = projection.handlers.find((h) => h.topic === topics.inboundMessages)!;
    const records: Applied<unknown>[] = [
      { value: inbound(), meta: meta(0) },
      { value: null, meta: meta(1) },
      { value: inbound({ event_id: asEventId('evt_in_2'), wa_message_id: 'WA2' }), meta: meta(2) },
    ];
    await handler.applyAll!(undefined as never, records);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.map((s) => [s.topic, s.key, s.value.event_id])).toEqual([
      ['gw.events', 'prj_1', 'evt_in_1'],
      ['gw.events', 'prj_1', 'evt_in_2'],
    ]);
  });

  it('turns a record it cannot render into a non-retryable failure (the runner dead-letters it)', async () => {
    const projection = eventsProjection({ producer: recordingProducer([]), mediaLinks: { mediaUrl } });
    const handler = projection.handlers.find((h) => h.topic === topics.inboundMessages)!;
    const broken = inbound({ content: { kind: 'mystery' } as unknown as InboundMessage['content'] });
    const failure = await handler.applyAll!(undefined as never, [{ value: broken, meta: meta(0) }]).then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayFailure);
    expect((failure as GatewayFailure).retryable).toBe(false);
  });
});

describe('where the events projection runs', () => {
  const deps = { producer: {} as Producer, mediaLinks: { mediaUrl, verify: () => false, ttlSeconds: 1 } };

  it('runs live, never in replay: a replay would announce the past again', () => {
    expect(projectionsFor(deps, 'live').has('events')).toBe(true);
    expect(projectionsFor(deps, 'replay').has('events')).toBe(false);
    expect(replayable).not.toContain('events');
  });
});
