import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { Clients } from '../../stack/clients.js';
import { serveMetrics } from '../../stack/metrics.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of the Prometheus text format (comments skipped); label values hold no escaped quotes here. */
function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[name!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

const NOT_AVRO = Buffer.from('not avro');

/**
 * `/metrics` of one process running every role: after a send, its webhook delivery and a poison
 * record, each gateway series is there with values that follow from what happened.
 */
describe('metrics', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  let receiver: Server;
  let base: string;
  const delivered: string[] = [];

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${account.api_key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const scrape = async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await response.text();
    return { text, samples: parseSamples(text) };
  };
  const valueOf = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', ALLOW_PRIVATE_NETWORK: 'true' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector', 'dispatcher'], clients);
    base = `http://127.0.0.1:${(roles.api!.app.server.address() as AddressInfo).port}`;
    account = await createAccount(clients.producer, { name: 'Metrics', email: 'ops@metrics.test', locale: 'en', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await waitFor('the sandbox number connected', async () => {
      const { status, body } = await call('GET', '/instances');
      return status === 200 && (body.data as Array<{ status: string }>).some((n) => n.status === 'connected');
    }, { timeoutMs: 60_000, intervalMs: 100 });
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        delivered.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    receiver?.close();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('serves lag, deliveries, latencies, dead letters and HTTP series without a key', async () => {
    const prefix = env.config.kafka.topicPrefix;
    const hook = await call('POST', '/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, event_types: ['message.sent'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const webhookId = hook.body.id as string;
    expect((await call('GET', `/webhooks/${webhookId}`)).status).toBe(200);
    const sent = await call('POST', '/messages/text', { to: '+5511955554444', body: 'Your order shipped' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const messageId = sent.body.message_id as string;
    await waitFor('message.sent delivered', () => delivered.some((body) => body.includes(messageId)), { timeoutMs: 60_000, intervalMs: 100 });
    await clients.producer.sendRaw(topicName(topics.events, prefix), [{ key: account.project_id, value: NOT_AVRO }]);

    const dispatcherGroup = `${prefix}dispatcher`;
    const { text, samples } = await waitFor(
      'the dead letter counted and the dispatcher caught up',
      async () => {
        const scraped = await scrape();
        const dead = valueOf(scraped.samples, 'gateway_dead_letters_total', { consumer: dispatcherGroup });
        const lagged = scraped.samples.filter((s) => s.name === 'gateway_consumer_lag' && s.labels.group === dispatcherGroup);
        return dead >= 1 && lagged.length > 0 && lagged.every((s) => s.value === 0) ? scraped : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // Consumer lag: a number per partition, for the groups of every role this process runs.
    const lag = samples.filter((s) => s.name === 'gateway_consumer_lag');
    for (const sample of lag) {
      expect(sample.labels.partition).toMatch(/^\d+$/);
      expect(Number.isInteger(sample.value) && sample.value >= 0, JSON.stringify(sample)).toBe(true);
    }
    const groups = new Set(lag.map((s) => s.labels.group));
    expect(groups).toContain(dispatcherGroup);
    expect(groups).toContain(`${prefix}connector`);
    expect([...groups].some((g) => g!.startsWith(`${prefix}processor.`))).toBe(true);
    expect(lag.some((s) => s.labels.group === dispatcherGroup && s.labels.topic === topicName(topics.events, prefix))).toBe(true);

    // Deliveries, latencies, dead letters.
    expect(valueOf(samples, 'gateway_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'gateway_webhook_delivery_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'gateway_webhook_delivery_latency_seconds_bucket', { le: '+Inf' })).toBe(valueOf(samples, 'gateway_webhook_delivery_latency_seconds_count'));
    expect(valueOf(samples, 'gateway_send_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    const sendSeconds = valueOf(samples, 'gateway_send_latency_seconds_sum') / valueOf(samples, 'gateway_send_latency_seconds_count');
    expect(sendSeconds).toBeGreaterThanOrEqual(0);
    expect(sendSeconds).toBeLessThan(60);
    expect(valueOf(samples, 'gateway_dead_letters_total', { consumer: dispatcherGroup })).toBe(1);

    // HTTP by route pattern and status, never by URL; and the process metrics of prom-client.
    expect(valueOf(samples, 'gateway_http_requests_total', { method: 'POST', route: '/messages/text', status: '202' })).toBe(1);
    expect(valueOf(samples, 'gateway_http_requests_total', { method: 'GET', route: '/instances', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'gateway_http_request_duration_seconds_count', { method: 'POST', route: '/messages/text' })).toBe(1);
    expect(valueOf(samples, 'gateway_http_requests_total', { method: 'GET', route: '/webhooks/:id', status: '200' })).toBe(1);
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);

    // Nothing names an account, a project or a message.
    for (const id of [account.account_id, account.project_id, messageId, webhookId]) expect(text).not.toContain(id);
  });

  it('serves the same registry on its own port, for a process without the API', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const listener = await serveMetrics(clients.metrics.registry, '127.0.0.1', port);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      const samples = parseSamples(await response.text());
      expect(samples.some((s) => s.name === 'gateway_consumer_lag')).toBe(true);
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await listener.stop();
    }
  });
});
