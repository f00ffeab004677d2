import { createServer, request as httpRequest, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { SseParser, type SseMessage } from '../../connectors/relay/index.js';
import { verify } from '../../events/signature.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

interface Delivered {
  readonly raw: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly status: number;
}

interface Envelope {
  event_id: string;
  event_type: string;
  instance_id?: string;
  client_reference?: string;
  payload: Record<string, unknown>;
}

/**
 * Events out, the whole way, in one process running every role on the sandbox network and driven
 * only over HTTP: a webhook registered through the API receives every kind of fact as a signed
 * event (one first refused, then retried), the project's stream shows the pairing QR and status
 * changes that webhooks never get, and the deliveries list shows what happened.
 */
describe('events end to end: facts to webhooks and the stream', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;
  let receiver: Server;
  let base: string;
  let stream: ClientRequest | undefined;
  const delivered: Delivered[] = [];
  const streamed: SseMessage[] = [];
  let refuseFirstReceived = true;

  const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${account.api_key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const envelopes = () => delivered.filter((d) => d.status === 200).map((d) => JSON.parse(d.raw) as Envelope);
  const deliveredOf = (type: string, match: (e: Envelope) => boolean = () => true) =>
    waitFor(`${type} delivered`, () => envelopes().find((e) => e.event_type === type && match(e)), { timeoutMs: 60_000, intervalMs: 100 });
  const streamedOf = (type: string, match: (e: Envelope) => boolean = () => true) =>
    waitFor(`${type} streamed`, () => streamed.map((m) => JSON.parse(m.data) as Envelope).find((e) => e.event_type === type && match(e)), {
      timeoutMs: 60_000,
      intervalMs: 100,
    });

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', ALLOW_PRIVATE_NETWORK: 'true', WEBHOOK_RETRY_DELAYS: '300ms,300ms,300ms,300ms,300ms' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector', 'dispatcher'], clients);
    base = `http://127.0.0.1:${(roles.api!.app.server.address() as AddressInfo).port}`;
    account = await createAccount(clients.producer, { name: 'Events', email: 'ops@events.test', locale: 'en', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await waitFor('the sandbox number connected', async () => {
      const { status, body } = await call('GET', '/instances');
      return status === 200 && (body.data as Array<{ status: string }>).some((n) => n.status === 'connected');
    }, { timeoutMs: 60_000, intervalMs: 100 });

    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let status = 200;
        if (refuseFirstReceived && req.headers['x-service-event-type'] === 'message.received') {
          refuseFirstReceived = false;
          status = 500;
        }
        delivered.push({ raw, headers: req.headers, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    stream?.destroy();
    receiver?.close();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('delivers every kind of fact, signed, and streams pairing and status changes', async () => {
    const created = await call('POST', '/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, event_types: [] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const webhookId = created.body.id as string;
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^whsec_/);

    await new Promise<void>((resolve, reject) => {
      const parser = new SseParser((message) => streamed.push(message));
      stream = httpRequest(`${base}/stream`, { headers: { authorization: `Bearer ${account.api_key}` } }, (response) => {
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toContain('text/event-stream');
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => parser.feed(chunk));
        resolve();
      });
      stream.on('error', reject);
      stream.end();
    });

    // A new number pairs by QR: the stream shows the QR and every status change.
    const number = await call('POST', '/instances', { nickname: 'second' });
    expect(number.status).toBe(202);
    const instanceId = number.body.id as string;
    await waitFor('the new number listed', async () => {
      const { body } = await call('GET', '/instances');
      return (body.data as Array<{ id: string }>).some((n) => n.id === instanceId);
    });
    expect((await call('POST', `/sandbox/instances/${instanceId}/connect`, { method: 'qr' })).status).toBe(202);
    const qr = await streamedOf('qr_code', (e) => e.instance_id === instanceId);
    expect(typeof qr.payload.qr_code).toBe('string');
    expect((await call('POST', `/sandbox/instances/${instanceId}/scan`, { phone: '+5511977776666' })).status).toBe(202);
    await streamedOf('instance.status', (e) => e.instance_id === instanceId && e.payload.status === 'connected');
    await streamedOf('instance.connected', (e) => e.instance_id === instanceId);
    const connected = await deliveredOf('instance.connected', (e) => e.instance_id === instanceId);
    expect(connected.payload).toMatchObject({ status: 'connected', phone: '+5511977776666' });

    // A send goes out, is delivered and read; the customer answers, then opts out by keyword.
    const sent = await call('POST', '/messages/text', { to: '+5511955554444', body: 'Your order shipped', client_reference: 'order-7', instance_id: instanceId });
    expect(sent.status).toBe(202);
    const messageId = sent.body.message_id as string;
    for (const type of ['message.sent', 'message.delivered', 'message.read']) {
      const event = await deliveredOf(type, (e) => e.payload.message_id === messageId);
      expect(event.client_reference).toBe('order-7');
      expect(event.instance_id).toBe(instanceId);
    }
    const customer = { from: '+5511955554444', name: 'Ana' };
    expect((await call('POST', `/sandbox/instances/${instanceId}/customer-messages`, { ...customer, content: { type: 'text', body: 'Thanks!' } })).status).toBe(202);
    const received = await deliveredOf('message.received', (e) => e.payload.body === 'Thanks!');
    expect(received.payload).toMatchObject({ type: 'text', from: '5511955554444@s.whatsapp.net' });
    expect((await call('POST', `/sandbox/instances/${instanceId}/customer-messages`, { ...customer, content: { type: 'text', body: 'STOP' } })).status).toBe(202);
    const optedOut = await deliveredOf('contact.opted_out');
    expect(optedOut.payload).toMatchObject({ source: 'keyword:inbound' });
    expect((await call('POST', `/sandbox/instances/${instanceId}/group-events`, { change: 'subject_changed', group: { jid: '120363000000000001@g.us', name: 'Buyers' }, subject: 'Buyers club' })).status).toBe(202);
    await deliveredOf('group.subject_changed');

    // Every body verifies as a receiver checks it; webhooks never see the stream-only events.
    for (const d of delivered) {
      expect(verify(secret, d.raw, d.headers['x-service-signature'] as string), d.raw).toBe(true);
      const envelope = JSON.parse(d.raw) as Envelope;
      expect(d.headers['x-service-event-id']).toBe(envelope.event_id);
      expect(d.headers['x-service-event-type']).toBe(envelope.event_type);
      expect(['qr_code', 'pairing_code', 'instance.status']).not.toContain(envelope.event_type);
    }
    // The refused message.received came again with the same event id.
    const attempts = delivered.filter((d) => (JSON.parse(d.raw) as Envelope).event_id === received.event_id);
    expect(attempts.map((d) => d.status)).toEqual([500, 200]);

    // The deliveries list shows that delivery as delivered after two attempts.
    const listed = await waitFor('the retried delivery listed as delivered', async () => {
      const { status, body } = await call('GET', `/webhooks/${webhookId}/deliveries`);
      const rows = status === 200 ? (body.data as Array<Record<string, unknown>>) : [];
      return rows.find((r) => r.event_id === received.event_id && r.status === 'delivered');
    }, { timeoutMs: 30_000, intervalMs: 100 });
    expect(listed.attempt_count).toBe(2);
  });

  it('gives up after five retries, lists the delivery as failed, and redelivers it by hand', async () => {
    const webhook = ((await call('GET', '/webhooks')).body.data as Array<{ id: string; url: string }>)[0]!;
    const down = createServer();
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const closedPort = (down.address() as AddressInfo).port;
    await new Promise<void>((resolve) => down.close(() => resolve()));
    expect((await call('PATCH', `/webhooks/${webhook.id}`, { url: `http://127.0.0.1:${closedPort}/hook` })).status).toBe(200);

    const triggered = await call('POST', '/webhooks/trigger', { event_type: 'message.received' });
    expect(triggered.status).toBe(202);
    expect(triggered.body.webhook_ids).toEqual([webhook.id]);
    const eventId = triggered.body.event_id as string;
    const failed = await waitFor('the triggered delivery failed for good', async () => {
      const { body } = await call('GET', `/webhooks/${webhook.id}/deliveries?status=failed`);
      return (body.data as Array<Record<string, unknown>>).find((r) => r.event_id === eventId);
    }, { timeoutMs: 60_000, intervalMs: 200 });
    expect(failed.attempt_count).toBe(6);

    expect((await call('PATCH', `/webhooks/${webhook.id}`, { url: webhook.url })).status).toBe(200);
    const again = await call('POST', `/webhooks/${webhook.id}/deliveries/${failed.id as string}/redeliver`);
    expect(again.status).toBe(202);
    const redelivered = await deliveredOf('message.received', (e) => e.event_id === eventId);
    expect(redelivered.event_id).toBe(eventId);
  });
});
