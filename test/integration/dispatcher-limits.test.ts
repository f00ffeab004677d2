import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryIdOf, startDispatcher, type RunningDispatcher } from '../../connectors/webhooks/index.js';
import { envelopeBody } from '../../events/envelope.js';
import { newSigningSecret, verify } from '../../events/signature.js';
import { asAccountId, asEventId, asProjectId, newId, type ProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, DeliveryAttempt, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createCipher, type Cipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, deliveryRetryTier, topics, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

interface Arrival {
  readonly webhookId: string;
  readonly eventId: string;
  readonly verified: boolean;
  readonly at: number;
}

/** The dispatcher in this process, with a tight bound per endpoint: its limits and the tier consumer. */
describe('dispatcher limits, retry tiers and the directory on the real stack', () => {
  let env: TestEnv;
  let clients: Clients;
  let dispatcher: RunningDispatcher | undefined;
  let server: Server;
  let base: string;
  const collectors: TopicConsumer[] = [];
  const attempts: DeliveryAttempt[] = [];
  const firstTier: DeliveryTask[] = [];
  const arrivals: Arrival[] = [];
  const secrets = new Map<string, string>();
  let hangingOpen = 0;
  let sequence = 0;
  let cipher: Cipher;

  const account = asAccountId('acc_limits');

  async function collect<V>(spec: TopicSpec<V>, into: V[]): Promise<void> {
    const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.test.${spec.name}`, topics: [spec], fromBeginning: true });
    await consumer.run(async (batch) => {
      for (const record of batch.records) if (record.decoded.ok && record.decoded.value !== null) into.push(record.decoded.value as V);
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    collectors.push(consumer);
  }

  /** A webhook on `/hang/<id>` (never answered) or `/ok/<id>` of the local receiver. */
  function webhookRecord(id: string, project: ProjectId, kind: 'hang' | 'ok', enabled = true): ConfigRecord {
    const secret = secrets.get(id) ?? newSigningSecret();
    secrets.set(id, secret);
    return {
      event_id: asEventId(`cfg_${env.id}_${id}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: null,
      entity_id: id,
      entity: {
        kind: 'webhook',
        url: `${base}/${kind}/${id}`,
        event_types: [],
        secret_ciphertext: cipher.seal(secret),
        enabled,
        description: null,
        created_at: Date.now(),
      },
    };
  }

  const register = (id: string, project: ProjectId, kind: 'hang' | 'ok') =>
    clients.producer.send(topics.config, [{ key: id, value: webhookRecord(id, project, kind) }]);

  function event(project: ProjectId): PublicEvent {
    return {
      event_id: asEventId(`evt_${env.id}_${++sequence}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: null,
      event_type: 'message.sent',
      scope: 'project',
      client_reference: null,
      group: null,
      sender: null,
      mentions: [],
      payload_json: JSON.stringify({ n: sequence }),
      connection: null,
      trigger: 'scheduled',
      webhook_id: null,
    };
  }

  const produce = (events: readonly PublicEvent[]) => clients.producer.send(topics.events, events.map((value) => ({ key: value.project_id!, value })));

  function task(webhookId: string, e: PublicEvent, overrides: Partial<DeliveryTask>): DeliveryTask {
    return {
      event_id: e.event_id,
      occurred_at: Date.now(),
      account_id: account,
      project_id: e.project_id,
      instance_id: null,
      delivery_id: deliveryIdOf(e.event_id, 'account_webhook', webhookId),
      target_kind: 'account_webhook',
      target_id: webhookId,
      event_type: e.event_type,
      trigger: 'scheduled',
      attempt: 2,
      not_before: Date.now(),
      last_error: 'HTTP 500',
      body_json: envelopeBody(e),
      ...overrides,
    };
  }

  const arrived = (webhookId: string) => new Set(arrivals.filter((a) => a.webhookId === webhookId).map((a) => a.eventId));

  beforeAll(async () => {
    env = await createTestEnv({
      OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      WEBHOOK_RETRY_DELAYS: '300ms,300ms',
      WEBHOOK_TIMEOUT_MS: '60000',
      WEBHOOK_ENDPOINT_CONCURRENCY: '1',
      WEBHOOK_ENDPOINT_QUEUE: '2',
    });
    clients = await testClients(env);
    cipher = createCipher(env.config.secretsKey);
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const [, kind, webhookId = ''] = (req.url ?? '').split('/');
        const raw = Buffer.concat(chunks);
        const signature = req.headers['x-service-signature'];
        arrivals.push({
          webhookId,
          eventId: String(req.headers['x-service-event-id']),
          verified: verify(secrets.get(webhookId) ?? '', raw, Array.isArray(signature) ? signature[0] : signature),
          at: Date.now(),
        });
        if (kind === 'hang') {
          hangingOpen += 1;
          res.on('close', () => (hangingOpen -= 1));
        } else res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await register('wh_hang', asProjectId('prj_hang'), 'hang');
    await register('wh_ok', asProjectId('prj_ok'), 'ok');
    await collect(topics.deliveryAttempts, attempts);
    await collect(deliveryRetryTier(300), firstTier);
    dispatcher = await startDispatcher(clients);
  });

  afterAll(async () => {
    await dispatcher?.stop();
    for (const consumer of collectors) await consumer.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await clients?.close();
    await env?.dispose();
  });

  it('moves deliveries past the endpoint queue to the first retry tier without counting an attempt', async () => {
    const events = Array.from({ length: 6 }, () => event(asProjectId('prj_hang')));
    await produce(events);
    const overflowed = new Set(events.slice(3).map((e) => e.event_id as string));
    await waitFor('the deliveries beyond the queue on the first tier', () =>
      [...overflowed].every((id) => firstTier.some((t) => t.target_id === 'wh_hang' && t.event_id === id)),
    );
    // One in flight (the concurrency), two waiting (the queue), the other three on the tier.
    expect(hangingOpen).toBe(1);
    expect(arrived('wh_hang')).toEqual(new Set([events[0]!.event_id]));
    const moved = firstTier.filter((t) => t.target_id === 'wh_hang');
    expect(new Set(moved.map((t) => t.event_id))).toEqual(overflowed);
    expect(moved.every((t) => t.attempt === 1 && t.not_before > t.occurred_at - 1 && t.body_json === envelopeBody(events.find((e) => e.event_id === t.event_id)!))).toBe(true);
    expect(attempts.filter((a) => a.target_id === 'wh_hang')).toEqual([]);
  });

  it('judges each event on the webhook as last written: 10,000 disabled versions, then an enabled one', async () => {
    const project = asProjectId('prj_new');
    const versions = [...Array.from({ length: 10_000 }, () => webhookRecord('wh_new', project, 'ok', false)), webhookRecord('wh_new', project, 'ok', true)];
    for (let i = 0; i < versions.length; i += 2_000) {
      await clients.producer.send(topics.config, versions.slice(i, i + 2_000).map((value) => ({ key: 'wh_new', value })));
    }
    const e = event(project);
    await produce([e]);
    await waitFor('the event at the new webhook', () => arrived('wh_new').has(e.event_id));
    expect(arrivals.filter((a) => a.webhookId === 'wh_new').every((a) => a.verified)).toBe(true);
  });

  it('takes a redelivery by hand from the first tier: a manual task with a new delivery id, due now', async () => {
    const e = event(asProjectId('prj_ok'));
    const manual = task('wh_ok', e, { trigger: 'manual', attempt: 1, delivery_id: newId('dlv'), last_error: null });
    await clients.producer.send(deliveryRetryTier(300), [{ key: 'wh_ok', value: manual }]);
    await waitFor('the manual attempt', () => attempts.find((a) => a.delivery_id === manual.delivery_id));
    expect(arrived('wh_ok').has(e.event_id)).toBe(true);
    const [attempt] = attempts.filter((a) => a.delivery_id === manual.delivery_id);
    expect(attempt).toMatchObject({ trigger: 'manual', attempt: 1, outcome: 'delivered', response_status: 200, body_json: manual.body_json, next_attempt_at: null });
  });

  it('makes a retry no sooner than its task is due, and drops the tasks of a deleted webhook', async () => {
    const e = event(asProjectId('prj_ok'));
    const gone = task('wh_deleted', event(asProjectId('prj_ok')), {});
    const later = task('wh_ok', e, { not_before: Date.now() + 1_500 });
    // One key, so the deleted webhook's task is judged before the due one is attempted.
    await clients.producer.send(deliveryRetryTier(300), [
      { key: 'wh_ok', value: gone },
      { key: 'wh_ok', value: later },
    ]);
    const attempt = await waitFor('the retry', () => attempts.find((a) => a.delivery_id === later.delivery_id));
    expect(attempt).toMatchObject({ attempt: 2, outcome: 'delivered', body_json: null });
    expect(attempt.occurred_at).toBeGreaterThanOrEqual(later.not_before);
    expect(Math.min(...arrivals.filter((a) => a.eventId === e.event_id).map((a) => a.at))).toBeGreaterThanOrEqual(later.not_before);
    expect(attempts.some((a) => a.target_id === 'wh_deleted')).toBe(false);
  });

  it('stops while a delivery hangs: the request is abandoned, nothing is written for it', async () => {
    const before = attempts.length;
    await dispatcher!.stop();
    dispatcher = undefined;
    await waitFor('the hanging request to close', () => hangingOpen === 0);
    expect(attempts.filter((a) => a.target_id === 'wh_hang')).toEqual([]);
    expect(attempts.length).toBe(before);
  });
});
