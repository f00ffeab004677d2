import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

/** A span as OTLP/HTTP JSON carries it. */
interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly attributes: readonly { key: string; value: { stringValue?: string } }[];
}

interface Export {
  resourceSpans: { resource: { attributes: ExportedSpan['attributes'] }; scopeSpans: { spans: ExportedSpan[] }[] }[];
}

const attribute = (span: ExportedSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

/**
 * A send traced across the log, every role in one process exporting to a plain OTLP/HTTP receiver:
 * the API's accept, the connector's send, the status applied by the processor and the webhook
 * delivery are spans of one trace, each the child of the hop before it.
 */
describe('tracing a send and its webhook over OTLP', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  let collector: Server;
  let webhookReceiver: Server;
  let base: string;
  const spans: ExportedSpan[] = [];
  const services = new Set<string>();

  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${account.api_key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/traces') {
          const exported = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Export;
          for (const { resource, scopeSpans } of exported.resourceSpans) {
            services.add(resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '');
            for (const scope of scopeSpans) spans.push(...scope.spans);
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    webhookReceiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
    await new Promise<void>((resolve) => webhookReceiver.listen(0, '127.0.0.1', resolve));

    env = await createTestEnv({
      PORT: '0',
      ALLOW_PRIVATE_NETWORK: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector', 'dispatcher'], clients);
    base = `http://127.0.0.1:${(roles.api!.app.server.address() as AddressInfo).port}`;
    account = await createAccount(clients.producer, { name: 'Traced', email: 'ops@traced.test', locale: 'en', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await waitFor('the sandbox number connected', async () => {
      const { status, body } = await call('GET', '/instances');
      return status === 200 && (body.data as Array<{ status: string }>).some((n) => n.status === 'connected');
    }, { timeoutMs: 60_000, intervalMs: 100 });
  });

  afterAll(async () => {
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
    collector?.close();
    webhookReceiver?.close();
  });

  it('links the accept, the network send, the status and the webhook delivery in one trace', async () => {
    const created = await call('POST', '/webhooks', { url: `http://127.0.0.1:${(webhookReceiver.address() as AddressInfo).port}/hook`, event_types: ['message.sent'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sent = await call('POST', '/messages/text', { to: '+5511955554444', body: 'Traced hello' });
    expect(sent.status).toBe(202);
    const messageId = sent.body.message_id as string;

    const named = (name: string, match: (span: ExportedSpan) => boolean) =>
      waitFor(`the ${name} span`, () => spans.find((span) => span.name === name && match(span)), { timeoutMs: 60_000, intervalMs: 100 });
    const accept = await named('send.accept', (span) => attribute(span, 'message_id') === messageId);
    const network = await named('send.network', (span) => attribute(span, 'message_id') === messageId);
    const apply = await named('status.apply', (span) => attribute(span, 'message_id') === messageId && attribute(span, 'status') === 'sent');
    const deliver = await named('webhook.deliver', (span) => span.parentSpanId === apply.spanId);

    expect(accept.parentSpanId ?? '').toBe('');
    expect(attribute(accept, 'account_id')).toBe(account.account_id);
    for (const span of [network, apply, deliver]) expect(span.traceId).toBe(accept.traceId);
    expect(network.parentSpanId).toBe(accept.spanId);
    expect(apply.parentSpanId).toBe(network.spanId);
    expect(attribute(deliver, 'account_id')).toBe(account.account_id);
    expect(services).toEqual(new Set(['api,processor,connector,dispatcher']));
  });
});
