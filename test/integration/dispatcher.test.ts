import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryIdOf } from '../../connectors/webhooks/index.js';
import { newSigningSecret, verify } from '../../events/signature.js';
import { asAccountId, asEventId, asProjectId, type AccountId, type ProjectId, type WebhookId } from '../../schemas/ids.js';
import type { ConfigRecord, DeliveryAttempt, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { topics, type TopicConsumer } from '../../topics/index.js';
import { collectTopic } from '../support/topic-collector.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';

/** Long enough that a design holding other endpoints behind the hanging one fails the test. */
const TIMEOUT_MS = 60_000;
const CONCURRENCY = 4;
const PER_RECEIVER = 20;

interface Received {
  readonly webhookId: string;
  readonly eventId: string | undefined;
  readonly eventType: string | undefined;
  readonly contentType: string | undefined;
  readonly signature: string | undefined;
  /** The body bytes as they arrived. */
  readonly raw: Buffer;
  /** Checked as a receiver must: over the raw bytes, before parsing, in constant time. */
  readonly verified: boolean;
  readonly at: number;
}

type Answer = { readonly status: number; readonly body?: string; readonly delayMs?: number } | 'hang';

/** A local webhook receiver; `answer` gets the request and how many times this event came before. */
class Receiver {
  readonly received: Received[] = [];
  /** Requests left unanswered that the dispatcher has not given up on. */
  open = 0;
  /** Unanswered requests the dispatcher closed (its timeout). */
  abandoned = 0;
  private server!: Server;

  constructor(
    private readonly secrets: ReadonlyMap<string, string>,
    private readonly answer: (request: Received, earlier: number) => Answer,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const webhookId = (req.url ?? '/').slice(1);
        const header = (name: string) => {
          const value = req.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        const request: Received = {
          webhookId,
          eventId: header('x-service-event-id'),
          eventType: header('x-service-event-type'),
          contentType: header('content-type'),
          signature: header('x-service-signature'),
          raw,
          verified: verify(this.secrets.get(webhookId) ?? '', raw, header('x-service-signature')),
          at: Date.now(),
        };
        const earlier = this.received.filter((r) => r.webhookId === webhookId && r.eventId === request.eventId).length;
        this.received.push(request);
        const answer = this.answer(request, earlier);
        if (answer === 'hang') {
          this.open += 1;
          res.on('close', () => {
            this.open -= 1;
            this.abandoned += 1;
          });
          return;
        }
        const send = () => res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
        if (answer.delayMs === undefined) send();
        else setTimeout(send, answer.delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  of(webhookId: string): Received[] {
    return this.received.filter((r) => r.webhookId === webhookId);
  }

  eventIds(webhookId: string): Set<string> {
    return new Set(this.of(webhookId).map((r) => r.eventId ?? ''));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Every value written to a topic from now on and before, gathered by a consumer group of its own. */
describe('dispatcher on the real stack: failing, hanging and killed', () => {
  let env: TestEnv;
  let clients: Clients;
  let dispatcher: GatewayProcess;
  let attempts: { values: DeliveryAttempt[]; consumer: TopicConsumer };
  let dead: { values: DeliveryTask[]; consumer: TopicConsumer };
  const secrets = new Map<string, string>();
  let sequence = 0;

  const account = asAccountId('acc_dispatch');
  const project = asProjectId('prj_dispatch');
  const otherProject = asProjectId('prj_dispatch_all');
  const disabledProject = asProjectId('prj_dispatch_off');
  const crashAccount = asAccountId('acc_crash');
  const crashProject = asProjectId('prj_crash');

  const healthy = new Receiver(secrets, () => ({ status: 200, body: 'ok' }));
  const hanging = new Receiver(secrets, () => 'hang');
  const flaky = new Receiver(secrets, (_r, earlier) => (earlier === 0 ? { status: 500, body: 'try again' } : { status: 200 }));
  const throttled = new Receiver(secrets, (_r, earlier) => (earlier < 2 ? { status: 429, body: 'slow down' } : { status: 204 }));
  const slow = new Receiver(secrets, () => ({ status: 200, delayMs: 25 }));
  let downUrl: string;

  /** One webhook per receiver, each listening to its own event type of one project (spec 6.2). */
  const hooks = {
    hanging: { id: 'wh_hanging', type: 'message.received' },
    healthy: { id: 'wh_healthy', type: 'message.sent' },
    flaky: { id: 'wh_flaky', type: 'message.delivered' },
    throttled: { id: 'wh_throttled', type: 'message.read' },
    down: { id: 'wh_down', type: 'message.failed' },
  } as const;

  function webhookRecord(id: string, owner: { account: AccountId; project: ProjectId }, url: string, eventTypes: string[], enabled = true): ConfigRecord {
    const secret = newSigningSecret();
    secrets.set(id, secret);
    return {
      event_id: asEventId(`cfg_${env.id}_${id}`),
      occurred_at: Date.now(),
      account_id: owner.account,
      project_id: owner.project,
      instance_id: null,
      entity_id: id,
      entity: {
        kind: 'webhook',
        url,
        event_types: eventTypes,
        secret_ciphertext: createCipher(env.config.secretsKey).seal(secret),
        enabled,
        description: null,
        created_at: Date.now(),
      },
    };
  }

  function event(projectId: ProjectId | null, eventType: string, overrides: Partial<PublicEvent> = {}): PublicEvent {
    const n = ++sequence;
    return {
      event_id: asEventId(`evt_${env.id}_${n}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: projectId,
      instance_id: null,
      event_type: eventType,
      scope: projectId === null ? 'account' : 'project',
      client_reference: `ref-${n}`,
      group: null,
      sender: null,
      mentions: [],
      payload_json: JSON.stringify({ n, text: 'olá, ünïcode ✓' }),
      connection: null,
      trigger: 'scheduled',
      webhook_id: null,
      ...overrides,
    };
  }

  const produce = (events: readonly PublicEvent[], key?: string) =>
    clients.producer.send(topics.events, events.map((value) => ({ key: key ?? value.project_id ?? value.account_id, value })));

  const startDispatcher = async () => {
    const child = spawnGateway(['dispatcher'], env.env);
    await waitFor('the dispatcher to run', () => {
      child.assertRunning();
      return child.output().includes('dispatcher running');
    }, { timeoutMs: 60_000 });
    return child;
  };

  beforeAll(async () => {
    env = await createTestEnv({
      OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      WEBHOOK_RETRY_DELAYS: '200ms,200ms,200ms,200ms,200ms',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
      SECRETS_KEY: `dispatcher-test-${Date.now()}`,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    clients = await testClients(env);
    for (const receiver of [healthy, hanging, flaky, throttled, slow]) await receiver.start();
    downUrl = `http://127.0.0.1:${await closedPort()}`;
    const main = { account, project };
    await clients.producer.send(
      topics.config,
      [
        webhookRecord(hooks.hanging.id, main, `${hanging.base}/${hooks.hanging.id}`, [hooks.hanging.type]),
        webhookRecord(hooks.healthy.id, main, `${healthy.base}/${hooks.healthy.id}`, [hooks.healthy.type]),
        webhookRecord(hooks.flaky.id, main, `${flaky.base}/${hooks.flaky.id}`, [hooks.flaky.type]),
        webhookRecord(hooks.throttled.id, main, `${throttled.base}/${hooks.throttled.id}`, [hooks.throttled.type]),
        webhookRecord(hooks.down.id, main, `${downUrl}/${hooks.down.id}`, [hooks.down.type]),
        webhookRecord('wh_all', { account, project: otherProject }, `${healthy.base}/wh_all`, []),
        webhookRecord('wh_off', { account, project: disabledProject }, `${healthy.base}/wh_off`, [], false),
        webhookRecord('wh_slow', { account: crashAccount, project: crashProject }, `${slow.base}/wh_slow`, []),
      ].map((value) => ({ key: value.entity_id, value })),
    );
    attempts = await collectTopic(clients, topics.deliveryAttempts, `${env.id}.test.attempts`);
    dead = await collectTopic(clients, topics.deliveryDead, `${env.id}.test.dead`);
    dispatcher = await startDispatcher();
  });

  afterAll(async () => {
    dispatcher?.kill('SIGKILL');
    await dispatcher?.exited;
    await attempts?.consumer.stop();
    await dead?.consumer.stop();
    for (const receiver of [healthy, hanging, flaky, throttled, slow]) await receiver.close().catch(() => undefined);
    await clients?.close();
    await env?.dispose();
  });

  const attemptsOf = (webhookId: string, eventId: string) =>
    attempts.values.filter((a) => a.target_id === webhookId && a.event_id === eventId).sort((a, b) => a.attempt - b.attempt);

  // Events of five receivers, interleaved on one partition (one project, one key).
  const produced = new Map<string, PublicEvent[]>();

  it('delivers to healthy endpoints while another endpoint of the same partition hangs', async () => {
    const batch: PublicEvent[] = [];
    for (let i = 0; i < PER_RECEIVER; i++) {
      for (const hook of Object.values(hooks)) {
        const e = event(project, hook.type);
        batch.push(e);
        produced.set(hook.id, [...(produced.get(hook.id) ?? []), e]);
      }
    }
    await produce(batch);
    const wanted = new Set(produced.get(hooks.healthy.id)!.map((e) => e.event_id as string));

    await waitFor('the hanging endpoint to hold as many deliveries as its bound', () => hanging.open === CONCURRENCY, { timeoutMs: 30_000 });
    const stuckSince = Math.min(...hanging.received.map((r) => r.at));
    await waitFor('every event at the healthy endpoint', () => [...wanted].every((id) => healthy.eventIds(hooks.healthy.id).has(id)), { timeoutMs: 30_000 });
    const healthyDone = Math.max(...healthy.of(hooks.healthy.id).map((r) => r.at));

    // The hanging endpoint is still stuck: none of its requests has timed out, no more than its bound
    // were sent (the rest wait in its queue), yet the healthy one has everything.
    expect(hanging.abandoned).toBe(0);
    expect(hanging.received).toHaveLength(CONCURRENCY);
    expect(healthyDone - stuckSince).toBeLessThan(TIMEOUT_MS);
    expect(healthy.eventIds(hooks.healthy.id)).toEqual(wanted);
  });

  it('signs every delivery so that a receiver verifies the raw body, and an altered body or secret fails', () => {
    const all = healthy.of(hooks.healthy.id);
    expect(all.length).toBeGreaterThanOrEqual(PER_RECEIVER);
    for (const request of all) {
      expect(request.verified).toBe(true);
      expect(request.contentType).toBe('application/json');
      const body = JSON.parse(request.raw.toString('utf8')) as { event_id: string; event_type: string; payload: { text: string } };
      expect(body.event_id).toBe(request.eventId);
      expect(body.event_type).toBe(request.eventType);
      expect(body.payload.text).toBe('olá, ünïcode ✓');
    }
    const sample = all[0]!;
    const secret = secrets.get(hooks.healthy.id)!;
    expect(verify(secret, sample.raw, sample.signature)).toBe(true);
    const altered = Buffer.from(sample.raw);
    altered[altered.length - 2] = altered[altered.length - 2]! ^ 1;
    expect(verify(secret, altered, sample.signature)).toBe(false);
    expect(verify(secrets.get(hooks.flaky.id)!, sample.raw, sample.signature)).toBe(false);
  });

  it('retries a 500 and a 429 until delivered: the repeat carries the same event id, body and signature', async () => {
    for (const [receiver, hook, attemptsEach] of [
      [flaky, hooks.flaky, 2],
      [throttled, hooks.throttled, 3],
    ] as const) {
      const events = produced.get(hook.id)!;
      await waitFor(`every event delivered to ${hook.id}`, () =>
        events.every((e) => attemptsOf(hook.id, e.event_id).some((a) => a.outcome === 'delivered')),
      );
      for (const e of events) {
        const requests = receiver.of(hook.id).filter((r) => r.eventId === e.event_id);
        expect(requests).toHaveLength(attemptsEach);
        for (const request of requests) {
          expect(request.verified).toBe(true);
          expect(request.raw.equals(requests[0]!.raw)).toBe(true);
          expect(request.signature).toBe(requests[0]!.signature);
        }
        const recorded = attemptsOf(hook.id, e.event_id);
        expect(recorded.map((a) => a.attempt)).toEqual(Array.from({ length: attemptsEach }, (_, i) => i + 1));
        expect(recorded.map((a) => a.outcome)).toEqual([...Array<string>(attemptsEach - 1).fill('failed_retryable'), 'delivered']);
        expect(new Set(recorded.map((a) => a.delivery_id))).toEqual(new Set([deliveryIdOf(e.event_id, 'account_webhook', hook.id)]));
        expect(recorded[0]!.response_status).toBe(hook === hooks.flaky ? 500 : 429);
        expect(recorded[0]!.response_body_excerpt).toBe(hook === hooks.flaky ? 'try again' : 'slow down');
        expect(recorded[0]!.body_json).toBe(requests[0]!.raw.toString('utf8'));
        expect(recorded[0]!.next_attempt_at).not.toBeNull();
        expect(recorded.slice(1).every((a) => a.body_json === null)).toBe(true);
        expect(recorded[recorded.length - 1]!.next_attempt_at).toBeNull();
      }
    }
  });

  it('gives up on an endpoint that is down after 1 + 5 attempts and dead-letters the delivery', async () => {
    const events = produced.get(hooks.down.id)!;
    await waitFor('every delivery to the down endpoint dead-lettered', () =>
      events.every((e) => dead.values.some((t) => t.target_id === hooks.down.id && t.event_id === e.event_id)),
    );
    // The last attempt and the dead letter go to two topics: Kafka orders neither before the other.
    await waitFor('every attempt to the down endpoint recorded', () => events.every((e) => attemptsOf(hooks.down.id, e.event_id).length >= 6));
    for (const e of events) {
      const recorded = attemptsOf(hooks.down.id, e.event_id);
      expect(recorded.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(recorded.map((a) => a.outcome)).toEqual(['failed_retryable', 'failed_retryable', 'failed_retryable', 'failed_retryable', 'failed_retryable', 'failed_final']);
      expect(recorded.every((a) => a.response_status === null && a.error !== null && a.url === `${downUrl}/${hooks.down.id}`)).toBe(true);
      expect(recorded.slice(0, 5).every((a) => a.next_attempt_at !== null)).toBe(true);
      expect(recorded[5]!.next_attempt_at).toBeNull();
      const deliveryId = deliveryIdOf(e.event_id, 'account_webhook', hooks.down.id);
      expect(new Set(recorded.map((a) => a.delivery_id))).toEqual(new Set([deliveryId]));
      const letters = dead.values.filter((t) => t.event_id === e.event_id);
      expect(letters).toHaveLength(1);
      expect(letters[0]).toMatchObject({ delivery_id: deliveryId, target_kind: 'account_webhook', attempt: 7, trigger: 'scheduled' });
      expect(letters[0]!.last_error).toContain('failed');
      expect(letters[0]!.body_json).toBe(recorded[0]!.body_json);
    }
  });

  it('sends a test event once to its webhook, account events to every webhook of the account, and never stream-only or disabled ones', async () => {
    const test = event(project, 'message.failed', { trigger: 'test', webhook_id: asWebhookId(hooks.down.id) });
    const streamOnly = ['qr_code', 'pairing_code', 'instance.status'].map((type) => event(otherProject, type));
    const afterStreamOnly = event(otherProject, 'group.joined');
    const disabledScheduled = event(disabledProject, 'message.sent');
    const disabledTest = event(disabledProject, 'message.sent', { trigger: 'test', webhook_id: asWebhookId('wh_off') });
    const usage = event(null, 'usage.threshold', { payload_json: JSON.stringify({ percent: 80, used: 800, included: 1000, plan: 'free' }) });
    const afterUsage = event(null, 'message.sent', { trigger: 'test', webhook_id: asWebhookId('wh_off') });
    await produce([test]);
    await produce([...streamOnly, afterStreamOnly]);
    await produce([disabledScheduled, disabledTest]);
    await produce([usage, afterUsage]);

    // Records of one key are judged in order: once the later one arrives, the earlier ones were judged.
    await waitFor('the event after the stream-only ones', () => healthy.eventIds('wh_all').has(afterStreamOnly.event_id));
    await waitFor('the test events of the disabled webhook', () =>
      [disabledTest, afterUsage].every((e) => healthy.eventIds('wh_off').has(e.event_id)),
    );
    await waitFor('the account event', () => healthy.eventIds('wh_all').has(usage.event_id));
    await waitFor('the test attempt', () => attemptsOf(hooks.down.id, test.event_id).length > 0);

    for (const e of streamOnly) expect(healthy.received.some((r) => r.eventId === e.event_id)).toBe(false);
    expect(healthy.eventIds('wh_off')).toEqual(new Set([disabledTest.event_id, afterUsage.event_id]));
    const usageBody = JSON.parse(healthy.of('wh_all').find((r) => r.eventId === usage.event_id)!.raw.toString('utf8')) as Record<string, unknown>;
    expect(usageBody).not.toHaveProperty('instance_id');
    expect(usageBody.payload).toEqual({ percent: 80, used: 800, included: 1000, plan: 'free' });

    const [only, ...more] = attemptsOf(hooks.down.id, test.event_id);
    expect(more).toEqual([]);
    expect(only).toMatchObject({ attempt: 1, trigger: 'test', outcome: 'failed_final', next_attempt_at: null });
    await waitFor('the attempts of the later events', () => attemptsOf('wh_off', afterUsage.event_id).length > 0);
    expect(dead.values.some((t) => t.event_id === test.event_id)).toBe(false);
  });

  it('loses nothing when the dispatcher is killed mid-delivery: after a restart every event arrives, repeats unchanged', async () => {
    const events = Array.from({ length: 300 }, () => event(crashProject, 'message.received', { account_id: crashAccount }));
    const ids = new Set(events.map((e) => e.event_id as string));
    await produce(events);
    await waitFor('some deliveries to the slow endpoint', () => slow.eventIds('wh_slow').size >= 30, { timeoutMs: 30_000 });
    dispatcher.kill('SIGKILL');
    await dispatcher.exited;
    const beforeRestart = slow.eventIds('wh_slow').size;
    expect(beforeRestart).toBeLessThan(ids.size);

    dispatcher = await startDispatcher();
    await waitFor('every event at the slow endpoint', () => [...ids].every((id) => slow.eventIds('wh_slow').has(id)), { timeoutMs: 60_000 });

    const requests = slow.of('wh_slow');
    expect(new Set(requests.map((r) => r.eventId))).toEqual(ids);
    const first = new Map<string, Received>();
    for (const request of requests) {
      expect(request.verified).toBe(true);
      const earlier = first.get(request.eventId!);
      if (earlier === undefined) first.set(request.eventId!, request);
      else expect(request.raw.equals(earlier.raw)).toBe(true);
    }
    // Attempts made before and after the crash belong to one delivery per event.
    await waitFor('the attempts of every event', () => events.every((e) => attemptsOf('wh_slow', e.event_id).length > 0));
    for (const e of events) {
      expect(new Set(attemptsOf('wh_slow', e.event_id).map((a) => a.delivery_id))).toEqual(new Set([deliveryIdOf(e.event_id, 'account_webhook', 'wh_slow')]));
    }
  });
});

const asWebhookId = (id: string) => id as WebhookId;
