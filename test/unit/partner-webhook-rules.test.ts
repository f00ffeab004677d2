import { describe, expect, it } from 'vitest';
import { Endpoints } from '../../connectors/webhooks/endpoint.js';
import { judge } from '../../connectors/webhooks/outcome.js';
import { PARTNER_RETRY_DELAYS_MS, nextStep, retrySchedules, tiersOf } from '../../connectors/webhooks/schedule.js';
import { targetsOf } from '../../connectors/webhooks/targets.js';
import { deliveryIdOf, firstTasks } from '../../connectors/webhooks/tasks.js';
import { partnerOperationEventTypes, webhookEventTypes } from '../../events/catalogue.js';
import { ConnectionsView } from '../../processors/connections/view.js';
import { Directory } from '../../processors/directory.js';
import { asAccountId, asEventId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, ConnectionTransition, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import { deliveryRetryTier } from '../../topics/index.js';
import { connectionRecord, partnerRecord, type ConnectionFields } from '../support/partner-records.js';

const cipher = createCipher('unit-test-key');

function event(overrides: Partial<PublicEvent> = {}): PublicEvent {
  return {
    event_id: asEventId('evt_p1'),
    occurred_at: Date.UTC(2026, 0, 2, 3, 4, 5),
    account_id: asAccountId('acc_a'),
    project_id: asProjectId('prj_a'),
    instance_id: asInstanceId('inst_1'),
    event_type: 'message.received',
    scope: 'project',
    client_reference: null,
    group: null,
    sender: { jid: '5511999998888@s.whatsapp.net', lid: null, name: 'Ana', phone: '+5511999998888' },
    mentions: [],
    payload_json: JSON.stringify({ type: 'text', body: 'hi' }),
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
    ...overrides,
  };
}

const webhookOf = (id: string) => ({ webhook_url: `https://${id}.example.com/hook`, webhook_secret_ciphertext: cipher.seal(`whsec_${id}`) });

function world(partners: ConfigRecord[], connections: ConnectionFields[]) {
  const directory = new Directory();
  for (const record of partners) directory.apply(record.entity_id, record);
  const view = new ConnectionsView();
  for (const c of connections) view.apply(c.id, connectionRecord(c));
  return { directory, view, endpoints: new Endpoints(directory, cipher, view) };
}

const conn = (id: string, partnerId: string, status: ConnectionFields['status'], projectId: string | null = 'prj_a'): ConnectionFields => ({
  id,
  partnerId,
  externalId: `ext-${id}`,
  accountId: projectId === null ? null : 'acc_a',
  projectId,
  status,
});

describe('partner webhook: who receives an event', () => {
  const { directory, view } = world(
    [
      partnerRecord('ptn_one', webhookOf('one')),
      partnerRecord('ptn_two', webhookOf('two')),
      partnerRecord('ptn_off', { ...webhookOf('off'), active: false }),
      partnerRecord('ptn_nohook'),
    ],
    [
      conn('c-one', 'ptn_one', 'active'),
      conn('c-one-b', 'ptn_one', 'active'),
      conn('c-two', 'ptn_two', 'active'),
      conn('c-susp', 'ptn_two', 'suspended'),
      conn('c-pending', 'ptn_two', 'pending_number'),
      conn('c-off', 'ptn_off', 'active'),
      conn('c-nohook', 'ptn_nohook', 'active'),
      conn('c-elsewhere', 'ptn_one', 'active', 'prj_b'),
    ],
  );
  const targets = (e: PublicEvent) =>
    targetsOf(e, directory, view)
      .map((t) => `${t.kind}:${t.id}:${t.connection?.id ?? '-'}`)
      .sort();

  it('sends an operation event once per active connection on the project, to reachable partners only', () => {
    expect(targets(event())).toEqual(['partner_webhook:ptn_one:c-one', 'partner_webhook:ptn_one:c-one-b', 'partner_webhook:ptn_two:c-two']);
    for (const type of partnerOperationEventTypes) expect(targets(event({ event_type: type })), type).toHaveLength(3);
  });

  it('never sends manual or test events, stream-only events, campaign or account events to partners', () => {
    expect(targets(event({ trigger: 'manual' }))).toEqual([]);
    expect(targets(event({ trigger: 'test' }))).toEqual([]);
    for (const type of ['qr_code', 'pairing_code', 'instance.status', 'campaign.paused']) expect(targets(event({ event_type: type })), type).toEqual([]);
    for (const type of ['usage.threshold', 'advisory.published']) expect(targets(event({ event_type: type, scope: 'account', project_id: null })), type).toEqual([]);
    expect(webhookEventTypes.filter((t) => !partnerOperationEventTypes.includes(t))).toEqual(['campaign.paused', 'usage.threshold', 'advisory.published', 'call.received']);
  });

  it('sends a connect.* event to the partner owning its connection, with the block it carries, whatever the status', () => {
    const block = { id: 'c-susp', external_id: 'ext-c-susp', account_id: asAccountId('acc_a'), project_id: asProjectId('prj_a'), status: 'suspended' as const };
    const suspended = event({ event_type: 'connect.suspended', scope: 'connection', instance_id: null, sender: null, connection: block });
    const found = targetsOf(suspended, directory, view);
    expect(found).toEqual([{ kind: 'partner_webhook', id: 'ptn_two', audience: 'partner', connection: block }]);
    expect(targets({ ...suspended, connection: { ...block, id: 'c-unknown' } })).toEqual([]);
    expect(targets({ ...suspended, connection: { ...block, id: 'c-off' } })).toEqual([]);
    expect(targets({ ...suspended, connection: null })).toEqual([]);
    expect(targets({ ...suspended, trigger: 'manual' })).toEqual([]);
  });

  it('renders one body per connection, with its block and sender.phone, under a delivery id per connection', () => {
    const e = event();
    const tasks = firstTasks(e, targetsOf(e, directory, view), 7_000);
    const one = tasks.filter((t) => t.target_id === 'ptn_one');
    expect(one).toHaveLength(2);
    expect(new Set(one.map((t) => t.delivery_id)).size).toBe(2);
    expect(one[0]!.delivery_id).toBe(deliveryIdOf('evt_p1', 'partner_webhook', 'ptn_one/c-one'));
    const body = JSON.parse(one[0]!.body_json) as Record<string, unknown>;
    expect(body.connection).toEqual({ id: 'c-one', external_id: 'ext-c-one', account_id: 'acc_a', project_id: 'prj_a', status: 'active' });
    expect(body.sender).toEqual({ jid: '5511999998888@s.whatsapp.net', lid: null, name: 'Ana', phone: '+5511999998888' });
    expect((JSON.parse(one[1]!.body_json) as { connection: { id: string } }).connection.id).toBe('c-one-b');
  });
});

describe('partner webhook: retries', () => {
  const schedules = retrySchedules([10_000, 60_000, 600_000, 3_600_000, 3_600_000]);

  it('retries transport failures, timeouts, 5xx and 429, and no other answer', () => {
    const response = (status: number) => judge({ kind: 'response', status, excerpt: '', durationMs: 1 }, 'partner_webhook');
    for (const status of [429, 500, 502, 503, 504]) expect(response(status), String(status)).toMatchObject({ delivered: false, retryable: true });
    for (const status of [301, 302, 400, 401, 403, 404, 408, 409, 410, 422]) expect(response(status), String(status)).toMatchObject({ delivered: false, retryable: false });
    expect(response(200)).toEqual({ delivered: true });
    expect(judge({ kind: 'timeout', error: 'slow', durationMs: 1 }, 'partner_webhook')).toMatchObject({ retryable: true, timedOut: true });
    expect(judge({ kind: 'transport', error: 'reset', durationMs: 1 }, 'partner_webhook')).toMatchObject({ retryable: true });
    expect(judge({ kind: 'refused', error: 'private', durationMs: 1 }, 'partner_webhook')).toMatchObject({ retryable: false });
    // Account webhooks keep their rule: any failure is retried.
    expect(judge({ kind: 'response', status: 404, excerpt: '', durationMs: 1 }, 'account_webhook')).toMatchObject({ retryable: true });
  });

  it('makes 5 attempts, the retries 1, 2, 4 and 8 s after the one before, on their own tiers, then dead-letters', () => {
    expect(PARTNER_RETRY_DELAYS_MS).toEqual([1_000, 2_000, 4_000, 8_000]);
    const partnerTask = (attempt: number) => ({ ...firstTasks(event(), [{ kind: 'partner_webhook', id: 'ptn_one', audience: 'partner' }], 0)[0]!, attempt });
    const steps = [1, 2, 3, 4, 5].map((attempt) => nextStep(partnerTask(attempt), true, schedules.partner_webhook, 0));
    expect(steps.map((s) => (s.kind === 'retry' ? [s.topic.name, s.notBefore] : s.kind))).toEqual([
      ['gw.deliveries.retry.1s', 1_000],
      ['gw.deliveries.retry.2s', 2_000],
      ['gw.deliveries.retry.4s', 4_000],
      ['gw.deliveries.retry.8s', 8_000],
      'dead',
    ]);
    expect(nextStep(partnerTask(1), false, schedules.partner_webhook, 0)).toEqual({ kind: 'dead' });
  });

  it('creates the tiers of both schedules, a shared delay once', () => {
    expect(tiersOf(schedules).map((t) => t.name)).toEqual(['10s', '1m', '10m', '1h', '1s', '2s', '4s', '8s'].map((l) => `gw.deliveries.retry.${l}`));
    const shared = tiersOf(retrySchedules([1_000, 2_000, 30_000]));
    expect(shared.map((t) => t.name)).toEqual(['1s', '2s', '30s', '4s', '8s'].map((l) => `gw.deliveries.retry.${l}`));
    expect(shared[0]).toEqual(deliveryRetryTier(1_000));
  });
});

describe('partner webhook: the endpoint at attempt time', () => {
  const taskFor = (e: PublicEvent, partnerId: string, connection: ConnectionTransition) =>
    firstTasks(e, [{ kind: 'partner_webhook', id: partnerId, audience: 'partner', connection: { id: connection.connection_id, external_id: connection.external_id, account_id: connection.account_id, project_id: connection.project_id, status: connection.to_status } }], 0)[0]!;

  it('posts to the partner URL with its opened webhook secret while the connection is active', () => {
    const c = conn('c-1', 'ptn_one', 'active');
    const { endpoints } = world([partnerRecord('ptn_one', webhookOf('one'))], [c]);
    expect(endpoints.of(taskFor(event(), 'ptn_one', connectionRecord(c)))).toEqual({ kind: 'ready', url: 'https://one.example.com/hook', secret: 'whsec_one' });
  });

  it('drops an operation event once its connection is no longer active, but not a connect.* event', () => {
    const c = conn('c-1', 'ptn_one', 'active');
    const { endpoints, view } = world([partnerRecord('ptn_one', webhookOf('one'))], [c]);
    const operation = taskFor(event(), 'ptn_one', connectionRecord(c));
    const lifecycle = taskFor(event({ event_type: 'connect.suspended', scope: 'connection' }), 'ptn_one', connectionRecord({ ...c, status: 'suspended' }));
    view.apply('c-1', connectionRecord({ ...c, status: 'suspended' }));
    expect(endpoints.of(operation)).toEqual({ kind: 'gone', reason: 'connection no longer active', url: 'https://one.example.com/hook' });
    expect(endpoints.of(lifecycle)).toMatchObject({ kind: 'ready' });
  });

  it('drops the tasks of a deleted, inactive or webhook-less partner; fails one whose secret cannot be opened', () => {
    const c = conn('c-1', 'ptn_one', 'active');
    const task = taskFor(event(), 'ptn_one', connectionRecord(c));
    expect(world([], [c]).endpoints.of(task)).toEqual({ kind: 'gone', reason: 'partner deleted' });
    expect(world([partnerRecord('ptn_one', { ...webhookOf('one'), active: false })], [c]).endpoints.of(task)).toEqual({ kind: 'gone', reason: 'partner inactive', url: 'https://one.example.com/hook' });
    expect(world([partnerRecord('ptn_one')], [c]).endpoints.of(task)).toEqual({ kind: 'gone', reason: 'partner has no webhook' });
    const foreign = partnerRecord('ptn_one', { webhook_url: 'https://one.example.com/hook', webhook_secret_ciphertext: createCipher('other').seal('x') });
    expect(world([foreign], [c]).endpoints.of(task)).toMatchObject({ kind: 'unusable' });
  });
});
