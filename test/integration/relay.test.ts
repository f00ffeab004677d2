import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { envelopeBody } from '../../events/envelope.js';
import { verify } from '../../events/signature.js';
import { eventKey } from '../../events/publish.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { PublicEvent } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { canSignIn } from '../support/sign-in.js';

interface Delivery {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  readonly raw: Buffer;
}

/** A local webhook receiver: keeps every request's raw body and headers, answers 200. */
async function startReceiver(): Promise<{ server: Server; url: string; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, deliveries };
}

/**
 * What a production receiver does: check the signature over the raw bytes (constant time) before
 * parsing, then trust the headers and the body.
 */
function receivedAsProduction(delivery: Delivery, secret: string): { event_id: string; event_type: string } {
  const signature = delivery.headers['x-service-signature'];
  expect(typeof signature === 'string' && verify(secret, delivery.raw, signature), 'signature verifies').toBe(true);
  expect(delivery.headers['content-type']).toBe('application/json');
  const body = JSON.parse(delivery.raw.toString('utf8')) as { event_id: string; event_type: string };
  expect(delivery.headers['x-service-event-id']).toBe(body.event_id);
  expect(delivery.headers['x-service-event-type']).toBe(body.event_type);
  return body;
}

describe('gateway listen: the local relay, as a child process against a listening API', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let port: number;
  let account: CreatedAccount;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const relays: GatewayProcess[] = [];

  const event = (type: string, overrides: Partial<PublicEvent> = {}): PublicEvent => ({
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId(account.account_id),
    project_id: asProjectId(account.project_id),
    instance_id: asInstanceId('inst_relay_test'),
    event_type: type,
    scope: 'project',
    client_reference: 'order-42',
    group: null,
    sender: { jid: '5511999998888@s.whatsapp.net', lid: null, name: 'Ana ✓', phone: '+5511999998888' },
    mentions: [],
    payload_json: JSON.stringify({ type: 'text', body: `olá, ${type} 🎉` }),
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
    ...overrides,
  });
  const accountEvent = () => event('usage.threshold', { scope: 'account', project_id: null, instance_id: null, sender: null, payload_json: '{"percent":80}' });
  const produce = (events: readonly PublicEvent[]) =>
    clients.producer.send(topics.events, events.map((value) => ({ key: eventKey(value), value })));
  const deliveredTo = (path: string) => receiver.deliveries.filter((d) => d.path === path);

  async function startListeningApi(): Promise<RunningApi> {
    const config = { ...clients.config, host: '127.0.0.1', port: port ?? 0 };
    const started = await startApi({ ...clients, config }, { listen: true });
    port = (started.app.server.address() as AddressInfo).port;
    return started;
  }

  function relay(args: readonly string[], extraEnv: Record<string, string> = {}): GatewayProcess {
    const child = spawnGateway(['listen', ...args], { ...env.env, GATEWAY_API_KEY: account.api_key, ...extraEnv });
    relays.push(child);
    return child;
  }

  const ready = (child: GatewayProcess) =>
    waitFor('the relay to connect', () => {
      child.assertRunning();
      return child.output().includes('Ready: listening to');
    });

  beforeAll(async () => {
    env = await createTestEnv({ STREAM_HEARTBEAT_MS: '500' });
    clients = await testClients(env);
    api = await startListeningApi();
    account = await createAccount(clients.producer, { name: 'Relay', email: 'ops@relay.test' }, async () => undefined);
    await api.directory.until(() => canSignIn(api.directory, account.account_id));
    receiver = await startReceiver();
  });

  afterEach(async () => {
    for (const child of relays.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });

  afterAll(async () => {
    await api?.stop();
    await new Promise((resolve) => receiver?.server.close(resolve));
    await clients?.close();
    await env?.dispose();
  });

  it('forwards each event byte for byte, signed with the secret it generated and printed, and resumes after the API restarts', async () => {
    const child = relay(['--forward-to', `${receiver.url}/generated`], { PORT: String(port) });
    await ready(child);
    const secret = /Signing secret of this session: (whsec_\S+)/.exec(child.output())?.[1];
    expect(secret).toBeDefined();

    const message = event('message.received');
    const threshold = accountEvent();
    await produce([event('qr_code'), event('message.sent', { trigger: 'test' }), message, event('instance.status'), threshold]);
    await waitFor('two deliveries', () => deliveredTo('/generated').length >= 2);
    const bodies = deliveredTo('/generated').map((d) => d.raw.toString('utf8'));
    expect(bodies.sort()).toEqual([envelopeBody(message), envelopeBody(threshold)].sort());
    for (const delivery of deliveredTo('/generated')) receivedAsProduction(delivery, secret!);
    expect(verify('whsec_another', deliveredTo('/generated')[0]!.raw, deliveredTo('/generated')[0]!.headers['x-service-signature'] as string)).toBe(false);

    // The API goes away; events written meanwhile arrive once it is back, each once.
    await api.stop();
    const whileDown = [event('message.delivered'), event('message.read')];
    await produce(whileDown);
    api = await startListeningApi();
    await waitFor('the relay to reconnect', () => child.output().includes('Reconnected to'), { timeoutMs: 60_000 });
    const after = event('group.joined');
    await produce([after]);
    await waitFor('five deliveries', () => deliveredTo('/generated').length >= 5, { timeoutMs: 30_000 });
    const ids = deliveredTo('/generated').map((d) => receivedAsProduction(d, secret!).event_id);
    expect(ids.slice(2)).toEqual([...whileDown, after].map((e) => e.event_id));

    child.kill('SIGINT');
    expect(await child.exited).toBe(0);
  });

  it('signs with --secret (never printing it), keeps to --events, and prints each event with the answer', async () => {
    const given = 'whsec_given_for_this_test';
    const child = relay([
      '--forward-to', `${receiver.url}/given`, '--secret', given, '--events', 'message.received,usage.threshold', '--print',
      '--api-url', `http://127.0.0.1:${port}`,
    ]);
    await ready(child);
    const wanted = [event('message.received'), accountEvent()];
    await produce([event('message.sent'), wanted[0]!, event('group.left'), wanted[1]!]);
    await waitFor('two deliveries', () => deliveredTo('/given').length >= 2);
    const received = deliveredTo('/given').map((d) => receivedAsProduction(d, given));
    expect(received.map((r) => r.event_id).sort()).toEqual(wanted.map((e) => e.event_id).sort());

    const lines = await waitFor('both events printed', () => {
      const printed = child.output().split('\n').filter((line) => wanted.some((e) => line.includes(e.event_id)));
      return printed.length === 2 ? printed : undefined;
    });
    for (const [i, e] of wanted.entries()) {
      const line = lines.find((l) => l.includes(e.event_id))!;
      expect(line, `line ${i}`).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+${e.event_type.replace('.', '\\.')}\\s+${e.event_id}\\s+-> 200 \\(\\d+ ms\\)$`));
    }
    expect(child.output()).not.toContain(given);
    expect(child.output()).not.toContain('message.sent');
  });

  it('with --print alone prints the events and posts nothing', async () => {
    const before = receiver.deliveries.length;
    const child = relay(['--print', '--api-url', `http://127.0.0.1:${port}`]);
    await ready(child);
    const read = event('message.read');
    await produce([read]);
    const line = await waitFor('the event printed', () => child.output().split('\n').find((l) => l.includes(read.event_id)));
    expect(line).toMatch(new RegExp(`\\smessage\\.read\\s+${read.event_id}$`));
    expect(receiver.deliveries.length).toBe(before);
    expect(child.output()).not.toContain('Signing secret');
  });

  it('stops with exit code 1 on a refused key or an unknown event type', async () => {
    const refused = relay(['--print', '--api-url', `http://127.0.0.1:${port}`], { GATEWAY_API_KEY: 'svc_live_not_a_key' });
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain('401 unauthorized');
    const unknown = relay(['--print', '--events', 'qr_code', '--api-url', `http://127.0.0.1:${port}`]);
    expect(await unknown.exited).toBe(1);
    expect(unknown.output()).toContain('unknown event type qr_code');
  });
});
