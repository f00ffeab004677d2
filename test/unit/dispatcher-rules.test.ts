import { describe, expect, it } from 'vitest';
import { Directory } from '../../processors/directory.js';
import { ConnectionsView } from '../../processors/connections/view.js';
import { createDeliver } from '../../connectors/webhooks/deliver.js';
import { Endpoints } from '../../connectors/webhooks/endpoint.js';
import { EndpointLimiter } from '../../connectors/webhooks/limiter.js';
import { eventTimeOf } from '../../connectors/webhooks/metrics.js';
import { judge, outcomeOf } from '../../connectors/webhooks/outcome.js';
import { nextStep, overflowStep, retrySchedule, retrySchedules } from '../../connectors/webhooks/schedule.js';
import { targetsOf } from '../../connectors/webhooks/targets.js';
import { deliveryIdOf, firstTasks } from '../../connectors/webhooks/tasks.js';
import { Watermarks } from '../../connectors/webhooks/watermark.js';
import { envelopeBody } from '../../events/envelope.js';
import { deliveryHeaders, sign, verify } from '../../events/signature.js';
import { asAccountId, asEventId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { ConfigRecord, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import { deliveryRetryTier, durationLabel, topics, type Producer } from '../../topics/index.js';
import { pino } from 'pino';

/** No partner connection anywhere: partner webhooks have their own tests (partner-webhook-rules). */
const noConnections = new ConnectionsView();

function webhook(id: string, account: string, project: string, eventTypes: string[], enabled = true, sealed = 'sealed'): ConfigRecord {
  return {
    event_id: asEventId(`cfg_${id}`),
    occurred_at: Date.UTC(2026, 0, 1),
    account_id: asAccountId(account),
    project_id: asProjectId(project),
    instance_id: null,
    entity_id: id,
    entity: {
      kind: 'webhook',
      url: `https://${id}.example.com/hook`,
      event_types: eventTypes,
      secret_ciphertext: sealed,
      enabled,
      description: null,
      created_at: null,
    },
  };
}

function event(overrides: Partial<PublicEvent> = {}): PublicEvent {
  return {
    event_id: asEventId('evt_1'),
    occurred_at: Date.UTC(2026, 0, 2, 3, 4, 5),
    account_id: asAccountId('acc_a'),
    project_id: asProjectId('prj_a1'),
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

function task(overrides: Partial<DeliveryTask> = {}): DeliveryTask {
  return firstTasks(event(), [{ kind: 'account_webhook', id: 'wh_messages', audience: 'account' }], 1_000).map((t) => ({ ...t, ...overrides }))[0]!;
}

describe('dispatcher: who receives an event', () => {
  const directory = new Directory();
  for (const record of [
    webhook('wh_messages', 'acc_a', 'prj_a1', ['message.received', 'message.sent']),
    webhook('wh_groups', 'acc_a', 'prj_a1', ['group.joined', 'qr_code']),
    webhook('wh_all_other_project', 'acc_a', 'prj_a2', []),
    webhook('wh_off', 'acc_a', 'prj_a3', [], false),
    webhook('wh_other_account', 'acc_b', 'prj_b1', []),
  ]) {
    directory.apply(record.entity_id, record);
  }
  const ids = (e: PublicEvent) => targetsOf(e, directory, noConnections).map((t) => t.id).sort();

  it('sends a project event to the enabled webhooks of its project that listen to it', () => {
    expect(ids(event())).toEqual(['wh_messages']);
    expect(ids(event({ event_type: 'group.joined' }))).toEqual(['wh_groups']);
    expect(ids(event({ project_id: asProjectId('prj_a2') }))).toEqual(['wh_all_other_project']);
    expect(ids(event({ event_type: 'message.read' }))).toEqual([]);
    expect(ids(event({ project_id: asProjectId('prj_a3') }))).toEqual([]);
  });

  it('never sends stream-only events or names outside the catalogue, even to a webhook naming them', () => {
    for (const type of ['qr_code', 'pairing_code', 'instance.status', 'connect.completed', 'made.up']) {
      expect(ids(event({ event_type: type }))).toEqual([]);
      expect(ids(event({ event_type: type, project_id: asProjectId('prj_a2') }))).toEqual([]);
    }
  });

  it('sends an account event to every enabled webhook of the account that listens to it', () => {
    const usage = event({ event_type: 'usage.threshold', scope: 'account', project_id: null, instance_id: null });
    expect(ids(usage)).toEqual(['wh_all_other_project']);
    const advisory = { ...usage, event_type: 'advisory.published' };
    expect(ids(advisory)).toEqual(['wh_all_other_project']);
  });

  it('sends a test event to its one webhook only, even a disabled one, and never across accounts', () => {
    const test = (webhookId: string, account = 'acc_a') =>
      event({ trigger: 'test', webhook_id: webhookId as PublicEvent['webhook_id'], event_type: 'message.read', account_id: asAccountId(account) });
    expect(ids(test('wh_messages'))).toEqual(['wh_messages']);
    expect(ids(test('wh_off'))).toEqual(['wh_off']);
    expect(ids(test('wh_deleted'))).toEqual([]);
    expect(ids(test('wh_other_account'))).toEqual([]);
  });

  it('forgets a deleted webhook', () => {
    const local = new Directory();
    const record = webhook('wh_x', 'acc_a', 'prj_a1', []);
    local.apply('wh_x', record);
    expect(targetsOf(event(), local, noConnections)).toHaveLength(1);
    local.apply('wh_x', null);
    expect(targetsOf(event(), local, noConnections)).toHaveLength(0);
  });
});

describe('dispatcher: tasks, ids and bodies', () => {
  it('derives the delivery id from the event and the target, so a redelivered event keeps it', () => {
    const a = deliveryIdOf('evt_1', 'account_webhook', 'wh_1');
    expect(a).toMatch(/^dlv_[a-z2-7]{16}$/);
    expect(deliveryIdOf('evt_1', 'account_webhook', 'wh_1')).toBe(a);
    expect(deliveryIdOf('evt_2', 'account_webhook', 'wh_1')).not.toBe(a);
    expect(deliveryIdOf('evt_1', 'account_webhook', 'wh_2')).not.toBe(a);
    expect(deliveryIdOf('evt_1', 'partner_webhook', 'wh_1')).not.toBe(a);
  });

  it('keeps the delivery ids of earlier versions: an event read again after an upgrade keeps its deliveries', () => {
    // Written by the first implementation (a sha256 Hash object); the one-shot hash must agree.
    expect(deliveryIdOf('evt_1', 'account_webhook', 'wh_1')).toBe('dlv_w4twuplnbxpdl4a2');
    expect(deliveryIdOf('evt_01JXAMPLE', 'partner_webhook', 'prt_9/con_3')).toBe('dlv_a4mlv3awnxk357wg');
  });

  it('makes first tasks due now, attempt 1, with the exact account body of spec 2.5', () => {
    const e = event();
    const [t] = firstTasks(e, [{ kind: 'account_webhook', id: 'wh_1', audience: 'account' }], 5_000);
    expect(t).toMatchObject({ event_id: 'evt_1', delivery_id: deliveryIdOf('evt_1', 'account_webhook', 'wh_1'), attempt: 1, not_before: 5_000, trigger: 'scheduled' });
    expect(t!.body_json).toBe(envelopeBody(e, 'account'));
    // The account audience never sees sender.phone.
    expect(JSON.parse(t!.body_json)).toEqual({
      event_id: 'evt_1',
      event_type: 'message.received',
      timestamp: '2026-01-02T03:04:05.000Z',
      instance_id: 'inst_1',
      sender: { jid: '5511999998888@s.whatsapp.net', lid: null, name: 'Ana' },
      payload: { type: 'text', body: 'hi' },
    });
  });
});

describe('dispatcher: the event time of a delivered body', () => {
  it("reads the envelope's timestamp, not one a payload or a name holds", () => {
    const tricky = event({
      event_id: asEventId('evt_"timestamp":"1999-01-01T00:00:00Z"'),
      sender: { jid: '5511999998888@s.whatsapp.net', lid: null, name: '"timestamp":"2001-01-01T00:00:00Z"', phone: null },
      payload_json: JSON.stringify({ timestamp: '2000-01-01T00:00:00Z', body: '"timestamp":"2002-01-01T00:00:00Z"' }),
    });
    expect(eventTimeOf(envelopeBody(tricky))).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(eventTimeOf('{"event_id":"evt_1","payload":{}}')).toBeUndefined();
    expect(eventTimeOf('{"event_id":"evt_1","event_type":"x","timestamp":"not a date"}')).toBeUndefined();
  });
});

describe('dispatcher: signatures as a receiver checks them', () => {
  const secret = 'whsec_test';
  const body = envelopeBody(event());
  const headers = deliveryHeaders(secret, body, { event_id: 'evt_1', event_type: 'message.received' });

  it('signs the raw body with the secret', () => {
    expect(headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verify(secret, Buffer.from(body, 'utf8'), headers['x-service-signature'])).toBe(true);
  });

  it('fails for an altered body, another secret, or a bad header', () => {
    expect(verify(secret, Buffer.from(body.replace('"hi"', '"hj"'), 'utf8'), headers['x-service-signature'])).toBe(false);
    expect(verify(secret, `${body} `, headers['x-service-signature'])).toBe(false);
    expect(verify('whsec_other', body, headers['x-service-signature'])).toBe(false);
    expect(verify(secret, body, undefined)).toBe(false);
    expect(verify(secret, body, sign(secret, body).slice(0, -1))).toBe(false);
    expect(verify(secret, body, sign(secret, body).toUpperCase())).toBe(false);
  });
});

describe('dispatcher: outcomes and the retry schedule', () => {
  const delays = retrySchedule([10_000, 60_000, 600_000, 3_600_000, 3_600_000]);

  it('counts only 2xx as delivered and retries every other answer, timeouts and transport failures', () => {
    expect(judge({ kind: 'response', status: 200, excerpt: '', durationMs: 1 })).toEqual({ delivered: true });
    expect(judge({ kind: 'response', status: 204, excerpt: '', durationMs: 1 })).toEqual({ delivered: true });
    for (const status of [301, 302, 400, 401, 404, 408, 410, 429, 500, 502, 503]) {
      expect(judge({ kind: 'response', status, excerpt: '', durationMs: 1 })).toEqual({ delivered: false, timedOut: false, retryable: true, summary: `HTTP ${status}` });
    }
    expect(judge({ kind: 'timeout', error: 'slow', durationMs: 1 })).toMatchObject({ delivered: false, timedOut: true, retryable: true });
    expect(judge({ kind: 'transport', error: 'reset', durationMs: 1 })).toMatchObject({ delivered: false, timedOut: false, retryable: true });
    expect(judge({ kind: 'refused', error: 'private', durationMs: 0 })).toMatchObject({ delivered: false, retryable: false });
  });

  it('records timed_out, failed_retryable or failed_final', () => {
    expect(outcomeOf({ delivered: true }, false)).toBe('delivered');
    expect(outcomeOf({ delivered: false, timedOut: true, retryable: true, summary: '' }, true)).toBe('timed_out');
    expect(outcomeOf({ delivered: false, timedOut: true, retryable: true, summary: '' }, false)).toBe('timed_out');
    expect(outcomeOf({ delivered: false, timedOut: false, retryable: true, summary: '' }, true)).toBe('failed_retryable');
    expect(outcomeOf({ delivered: false, timedOut: false, retryable: true, summary: '' }, false)).toBe('failed_final');
  });

  it('sends retry n to the tier of its own delay, then to the dead letters', () => {
    const now = 1_000_000;
    const steps = [1, 2, 3, 4, 5, 6].map((attempt) => nextStep(task({ attempt }), true, delays, now));
    expect(steps.slice(0, 5).map((step) => (step.kind === 'retry' ? [step.topic.name, step.notBefore - now] : step.kind))).toEqual([
      ['gw.deliveries.retry.10s', 10_000],
      ['gw.deliveries.retry.1m', 60_000],
      ['gw.deliveries.retry.10m', 600_000],
      ['gw.deliveries.retry.1h', 3_600_000],
      ['gw.deliveries.retry.1h', 3_600_000],
    ]);
    expect(steps[5]).toEqual({ kind: 'dead' });
  });

  it('derives one tier a distinct delay: the default schedule keeps the four tier names of before', () => {
    expect(delays.tiers.map((t) => t.name)).toEqual(['gw.deliveries.retry.10s', 'gw.deliveries.retry.1m', 'gw.deliveries.retry.10m', 'gw.deliveries.retry.1h']);
    expect(retrySchedule([1_000, 2_000, 4_000, 8_000]).tiers.map((t) => t.name)).toEqual(
      ['1s', '2s', '4s', '8s'].map((label) => `gw.deliveries.retry.${label}`),
    );
    // Equal delays share a tier, wherever they stand in the schedule; unequal ones never do.
    const mixed = retrySchedule([2_000, 1_500, 2_000, 90_000]);
    expect(mixed.tiers.map((t) => t.name)).toEqual(['gw.deliveries.retry.2s', 'gw.deliveries.retry.1500ms', 'gw.deliveries.retry.90s']);
    expect(mixed.retries.map((r) => r.tier.name)).toEqual(['gw.deliveries.retry.2s', 'gw.deliveries.retry.1500ms', 'gw.deliveries.retry.2s', 'gw.deliveries.retry.90s']);
    for (const { tier, delayMs } of mixed.retries) expect(tier).toEqual(deliveryRetryTier(delayMs));
  });

  it('keeps a tier a day at least, and a comfortable multiple of longer delays', () => {
    expect(deliveryRetryTier(10_000)).toMatchObject({ partitions: 6, cleanup: 'delete', retentionMs: 86_400_000 });
    expect(deliveryRetryTier(3_600_000).retentionMs).toBe(3 * 86_400_000);
    expect(deliveryRetryTier(86_400_000).retentionMs! / 86_400_000).toBeGreaterThanOrEqual(3);
  });

  it('writes a delay in the largest unit that holds it whole', () => {
    expect([10_000, 60_000, 600_000, 3_600_000, 1_500, 90_000, 7_200_000, 1].map(durationLabel)).toEqual(['10s', '1m', '10m', '1h', '1500ms', '90s', '2h', '1ms']);
    expect(() => durationLabel(0)).toThrow(/positive/);
  });

  it('takes the number of retries from the delays, and fast delays for tests', () => {
    const fast = retrySchedule([200, 200]);
    expect(nextStep(task({ attempt: 2 }), true, fast, 0)).toEqual({ kind: 'retry', topic: deliveryRetryTier(200), notBefore: 200 });
    expect(nextStep(task({ attempt: 3 }), true, fast, 0)).toEqual({ kind: 'dead' });
    expect(() => retrySchedule([])).toThrow(/at least one/);
  });

  it('dead-letters a refused destination at once and never retries or dead-letters a test event', () => {
    expect(nextStep(task({ attempt: 1 }), false, delays, 0)).toEqual({ kind: 'dead' });
    expect(nextStep(task({ attempt: 1, trigger: 'test' }), true, delays, 0)).toEqual({ kind: 'none' });
    expect(nextStep(task({ attempt: 1, trigger: 'manual' }), true, delays, 0)).toMatchObject({ kind: 'retry', topic: deliveryRetryTier(10_000) });
  });

  it('moves an overflowing delivery to the first tier after the first delay', () => {
    expect(overflowStep(delays, 5)).toEqual({ kind: 'retry', topic: deliveryRetryTier(10_000), notBefore: 10_005 });
  });
});

describe('dispatcher: commit watermarks', () => {
  it('commits up to the lowest offset not settled, whatever order deliveries settle in', () => {
    const marks = new Watermarks();
    for (const offset of [10, 11, 12, 13]) expect(marks.take('t', 0, offset)).toBe(true);
    expect(marks.advanced()).toEqual([{ topic: 't', partition: 0, next: 10 }]);
    marks.settle('t', 0, 12);
    marks.settle('t', 0, 13);
    expect(marks.advanced()).toEqual([{ topic: 't', partition: 0, next: 10 }]);
    marks.settle('t', 0, 10);
    expect(marks.advanced()).toEqual([{ topic: 't', partition: 0, next: 11 }]);
    marks.committed({ topic: 't', partition: 0, next: 11 });
    expect(marks.advanced()).toEqual([]);
    marks.settle('t', 0, 11);
    expect(marks.advanced()).toEqual([{ topic: 't', partition: 0, next: 14 }]);
    expect(marks.openCount()).toBe(0);
  });

  it('keeps partitions apart and retries a position whose commit failed', () => {
    const marks = new Watermarks();
    marks.take('t', 0, 5);
    marks.take('t', 1, 7);
    marks.settle('t', 1, 7);
    expect(marks.advanced()).toEqual([
      { topic: 't', partition: 0, next: 5 },
      { topic: 't', partition: 1, next: 8 },
    ]);
    marks.committed({ topic: 't', partition: 0, next: 5 });
    expect(marks.advanced()).toEqual([{ topic: 't', partition: 1, next: 8 }]);
  });

  it('does not take a record twice when a partition is fetched again from an older position', () => {
    const marks = new Watermarks();
    marks.take('t', 0, 1);
    marks.take('t', 0, 2);
    expect(marks.take('t', 0, 1)).toBe(false);
    expect(marks.take('t', 0, 2)).toBe(false);
    expect(marks.take('t', 0, 3)).toBe(true);
    expect(marks.openCount()).toBe(3);
  });
});

describe('dispatcher: the limiter per endpoint', () => {
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };

  it('runs at most `concurrency` jobs of one endpoint, queues `queue` more, and refuses the rest', async () => {
    const limiter = new EndpointLimiter(2, 1);
    const gates = [gate(), gate(), gate()];
    let started = 0;
    const job = (i: number) => async () => {
      started += 1;
      await gates[i]!.opened;
    };
    const runs = [limiter.run('slow', job(0)), limiter.run('slow', job(1)), limiter.run('slow', job(2))];
    expect(runs.every((r) => r !== undefined)).toBe(true);
    expect(started).toBe(2);
    expect(limiter.load('slow')).toEqual({ running: 2, waiting: 1 });
    expect(limiter.run('slow', job(0))).toBeUndefined();

    // Another endpoint is not held by the slow one.
    let fastRan = false;
    await limiter.run('fast', async () => {
      fastRan = true;
    });
    expect(fastRan).toBe(true);

    gates[0]!.open();
    await runs[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(3);
    gates[1]!.open();
    gates[2]!.open();
    await Promise.all(runs.map((run) => run ?? Promise.reject(new Error('refused'))));
    expect(limiter.load('slow')).toEqual({ running: 0, waiting: 0 });
  });

  it('tells a full endpoint that answers promptly from a slow one, and says when it has room again', async () => {
    let now = 0;
    const limiter = new EndpointLimiter(1, 2, () => now);
    const gates = Array.from({ length: 4 }, gate);
    const job = (i: number) => () => gates[i]!.opened;
    const settle = async (i: number, run: Promise<void> | undefined) => {
      gates[i]!.open();
      await run;
      await new Promise((resolve) => setImmediate(resolve));
    };
    const runs = [0, 1, 2].map((i) => limiter.run('e', job(i)));
    expect(limiter.isFull('e')).toBe(true);
    // Its one request went out less than a second ago: worth waiting for.
    expect(limiter.answersPromptly('e')).toBe(true);
    now += 1_500;
    // Open for a second and a half: a slow endpoint, whose deliveries go to the retry tier.
    expect(limiter.answersPromptly('e')).toBe(false);
    let roomy = false;
    void limiter.room('e').then(() => (roomy = true));
    await settle(0, runs[0]);
    expect(roomy).toBe(true);
    expect(limiter.answersPromptly('e')).toBe(true);
    runs.push(limiter.run('e', job(3)));
    expect(limiter.isFull('e')).toBe(true);
    for (const i of [1, 2, 3]) await settle(i, runs[i]);
    expect(limiter.isFull('e')).toBe(false);
    expect(limiter.isFull('never-seen')).toBe(false);
  });

  it('says a full endpoint has room only once half its queue has drained, so a paused partition fetches many records again, not one', async () => {
    const limiter = new EndpointLimiter(1, 10);
    const gates = Array.from({ length: 11 }, gate);
    const runs = gates.map((g) => limiter.run('e', () => g.opened));
    expect(limiter.isFull('e')).toBe(true);
    let roomy = false;
    void limiter.room('e').then(() => (roomy = true));
    const settle = async (i: number) => {
      gates[i]!.open();
      await runs[i];
      await new Promise((resolve) => setImmediate(resolve));
    };
    for (const i of [0, 1, 2, 3]) await settle(i);
    expect(limiter.load('e')).toEqual({ running: 1, waiting: 6 });
    expect(limiter.isFull('e')).toBe(false);
    expect(roomy).toBe(false);
    await settle(4);
    expect(limiter.load('e')).toEqual({ running: 1, waiting: 5 });
    expect(roomy).toBe(true);
    for (let i = 5; i < 11; i++) await settle(i);
  });

  it('passes a job failure to its caller and frees the slot', async () => {
    const limiter = new EndpointLimiter(1, 0);
    await expect(limiter.run('e', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run('e', async () => undefined)).resolves.toBeUndefined();
  });
});

describe('dispatcher: the endpoint of a task, read at attempt time', () => {
  const cipher = createCipher('unit-test-key');
  const sealed = (secret: string, enabled = true) => webhook('wh_e', 'acc_a', 'prj_a1', [], enabled, cipher.seal(secret));
  const setUp = (record: ConfigRecord | null) => {
    const directory = new Directory();
    if (record !== null) directory.apply('wh_e', record);
    return { directory, endpoints: new Endpoints(directory, cipher, noConnections) };
  };
  const taskOf = (overrides: Partial<DeliveryTask> = {}) => task({ target_id: 'wh_e', ...overrides });

  it('opens the current secret, and a rotated one', () => {
    const { directory, endpoints } = setUp(sealed('whsec_one'));
    expect(endpoints.of(taskOf())).toEqual({ kind: 'ready', url: 'https://wh_e.example.com/hook', secret: 'whsec_one' });
    directory.apply('wh_e', sealed('whsec_two'));
    expect(endpoints.of(taskOf({ attempt: 3 }))).toMatchObject({ kind: 'ready', secret: 'whsec_two' });
  });

  it('drops the tasks of a deleted webhook, and of a disabled one unless asked for by hand', () => {
    expect(setUp(null).endpoints.of(taskOf())).toEqual({ kind: 'gone', reason: 'webhook deleted' });
    const { endpoints } = setUp(sealed('whsec_off', false));
    expect(endpoints.of(taskOf())).toEqual({ kind: 'gone', reason: 'webhook disabled', url: 'https://wh_e.example.com/hook' });
    expect(endpoints.of(taskOf({ trigger: 'manual', attempt: 2 }))).toEqual({ kind: 'gone', reason: 'webhook disabled', url: 'https://wh_e.example.com/hook' });
    expect(endpoints.of(taskOf({ trigger: 'manual', attempt: 1 }))).toMatchObject({ kind: 'ready' });
    expect(endpoints.of(taskOf({ trigger: 'test' }))).toMatchObject({ kind: 'ready' });
  });

  it('closes a retry dropped for a disabled webhook with a final attempt that posted nothing, so its delivery is not left pending', async () => {
    const { directory, endpoints } = setUp(sealed('whsec_off', false));
    const written: Array<{ topic: string; value: unknown }> = [];
    const producer: Producer = {
      send: async (spec, records) => {
        written.push(...records.map((r) => ({ topic: spec.name, value: r.value })));
        return new Map();
      },
      sendRaw: async () => undefined,
      disconnect: async () => undefined,
    };
    const deliver = createDeliver({
      endpoints,
      limiter: new EndpointLimiter(4, 10),
      poster: { post: () => Promise.reject(new Error('nothing is posted to a disabled webhook')), close: async () => undefined },
      producer,
      schedules: retrySchedules([10, 20]),
      logger: pino({ level: 'silent' }),
      metrics: { ended: () => undefined, delivered: () => undefined },
    });
    await deliver(taskOf({ attempt: 2 }));
    expect(written).toEqual([
      {
        topic: topics.deliveryAttempts.name,
        value: expect.objectContaining({ attempt: 2, outcome: 'failed_final', error: 'not sent: webhook disabled', url: 'https://wh_e.example.com/hook', next_attempt_at: null, response_status: null, body_json: null }) as unknown,
      },
    ]);
    // A first attempt that meets a webhook disabled since its event was judged has no history to close; a deleted webhook's goes with it.
    await deliver(taskOf({ attempt: 1, delivery_id: 'dlv_first' }));
    directory.apply('wh_e', null);
    await deliver(taskOf({ attempt: 3, delivery_id: 'dlv_deleted' }));
    expect(written).toHaveLength(1);
  });

  it('fails a task whose secret this SECRETS_KEY cannot open', () => {
    const { endpoints } = setUp(webhook('wh_e', 'acc_a', 'prj_a1', [], true, createCipher('another-key').seal('whsec_x')));
    expect(endpoints.of(taskOf())).toMatchObject({ kind: 'unusable', url: 'https://wh_e.example.com/hook' });
  });
});
