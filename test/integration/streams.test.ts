import { request as httpRequest, type IncomingHttpHeaders, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { issueKey } from '../../processors/config/keys.js';
import { parseCursor } from '../../api/streams/index.js';
import { MAX_STREAMS_PER_KEY } from '../../api/streams/routes.js';
import { SseParser } from '../../connectors/relay/index.js';
import { envelopeBody } from '../../events/envelope.js';
import { eventKey } from '../../events/publish.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { PublicEvent } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { partitionOf, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { partnerIssuedKey } from '../support/partner-records.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

const PARTITIONS = topics.events.partitions;

interface Received {
  readonly type: string;
  readonly data: string;
  readonly id: string;
}

/** An SSE client over real HTTP: what it received, and the id it would resume from. */
interface StreamClient {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly events: Received[];
  /** Everything read, for heartbeats and failure messages. */
  text(): string;
  lastEventId(): string;
  readonly ended: Promise<void>;
  isEnded(): boolean;
  close(): void;
}

/** Every client a test opened, closed after it whatever its outcome. */
const opened: StreamClient[] = [];

function connect(base: string, path: string, key: string | undefined, lastEventId?: string): Promise<StreamClient> {
  return new Promise<StreamClient>((resolve, reject) => {
    const url = new URL(path, base);
    const req: ClientRequest = httpRequest(url, {
      headers: {
        accept: 'text/event-stream',
        ...(key !== undefined && { authorization: `Bearer ${key}` }),
        ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
      },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const events: Received[] = [];
      const parser = new SseParser((m) => events.push({ type: m.type, data: m.data, id: m.lastEventId }));
      let text = '';
      let ended = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        parser.feed(chunk);
      });
      const done = new Promise<void>((settle) => {
        res.once('close', () => {
          ended = true;
          settle();
        });
      });
      req.on('error', () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        text: () => text,
        lastEventId: () => parser.lastEventId,
        ended: done,
        isEnded: () => ended,
        close: () => req.destroy(),
      });
    });
    req.end();
  }).then((client) => {
    opened.push(client);
    return client;
  });
}

/** The event ids of what a client received, in order. */
function idsOf(received: readonly Received[]): string[] {
  return received.map((r) => (JSON.parse(r.data) as { event_id: string }).event_id);
}

describe('SSE streams: GET /stream and GET /webhooks/listen on the real stack', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let base: string;
  let account: CreatedAccount;
  /** A project of the same account, on the same partition as `account.project_id`. */
  let neighbour: string;
  let partnerKey: string;
  let narrowKey: string;

  const event = (type: string, overrides: Partial<PublicEvent> = {}): PublicEvent => ({
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId(account.account_id),
    project_id: asProjectId(account.project_id),
    instance_id: asInstanceId('inst_stream_test'),
    event_type: type,
    scope: 'project',
    client_reference: null,
    group: null,
    sender: null,
    mentions: [],
    payload_json: JSON.stringify({ type: 'text', body: `a ${type}` }),
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
    ...overrides,
  });
  const accountEvent = (overrides: Partial<PublicEvent> = {}) =>
    event('usage.threshold', { scope: 'account', project_id: null, instance_id: null, payload_json: '{"percent":80}', ...overrides });
  const produce = (events: readonly PublicEvent[]) =>
    clients.producer.send(topics.events, events.map((value) => ({ key: eventKey(value), value })));

  /**
   * Waits until `client` has as many events as expected, then checks they are exactly those, each
   * once, in the order they were written within each partition (project events, account events),
   * each with its event type and the exact envelope.
   */
  async function expectExactly(client: StreamClient, expected: readonly PublicEvent[]): Promise<void> {
    await waitFor(`${expected.length} events on the stream`, () => client.events.length >= expected.length, { timeoutMs: 30_000 });
    const ids = idsOf(client.events);
    expect(new Set(ids).size, 'no event twice').toBe(ids.length);
    expect([...ids].sort()).toEqual(expected.map((e) => e.event_id).sort());
    for (const scope of ['project', 'account']) {
      const written: string[] = expected.filter((e) => e.scope === scope).map((e) => e.event_id);
      expect(ids.filter((id) => written.includes(id)), `${scope} events in order`).toEqual(written);
    }
    const byId = new Map(expected.map((e) => [e.event_id as string, e]));
    for (const received of client.events) {
      const sent = byId.get((JSON.parse(received.data) as { event_id: string }).event_id)!;
      expect(received.type).toBe(sent.event_type);
      expect(received.data).toBe(envelopeBody(sent, 'account'));
    }
  }

  async function newAccount(): Promise<CreatedAccount> {
    // Two partitions make the cursor two positions: the test wants the project and its account apart.
    for (;;) {
      const created = await createAccount(clients.producer, { name: 'Streams', email: 'ops@streams.test' }, async () => undefined);
      if (api.streams.partitionsOf(created.project_id, created.account_id).length === 2) return created;
    }
  }

  async function listeningApi(overrides: Partial<Clients['config']['streams']> = {}, port = 0): Promise<{ api: RunningApi; base: string }> {
    const config = { ...clients.config, host: '127.0.0.1', port, streams: { ...clients.config.streams, ...overrides } };
    const started = await startApi({ ...clients, config }, { listen: true });
    const address = started.app.server.address() as AddressInfo;
    return { api: started, base: `http://127.0.0.1:${address.port}` };
  }

  beforeAll(async () => {
    env = await createTestEnv({ STREAM_HEARTBEAT_MS: '200' });
    clients = await testClients(env);
    ({ api, base } = await listeningApi());
    account = await newAccount();
    for (let i = 0; ; i++) {
      neighbour = `prj_neighbour_${env.id}_${i}`;
      if (partitionOf(neighbour, PARTITIONS) === partitionOf(account.project_id, PARTITIONS)) break;
    }
    const narrow = issueKey({ accountId: asAccountId(account.account_id), projectId: asProjectId(account.project_id), role: 'agent', scopes: ['instances:read'] });
    await clients.producer.send(topics.config, [narrow.record].map((value) => ({ key: value.entity_id, value })));
    narrowKey = narrow.apiKey;
    await api.directory.until(() => canSignIn(api.directory, account.account_id, 2));
    partnerKey = await partnerIssuedKey(clients, api, { accountId: account.account_id, projectId: account.project_id, scopes: ['events:read'] });
  });

  afterEach(() => {
    for (const client of opened.splice(0)) client.close();
  });

  afterAll(async () => {
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('streams the project events, stream-only ones and the account events; resumes after Last-Event-ID with each event once', async () => {
    const first = await connect(base, '/stream', account.api_key);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('text/event-stream');
    expect(first.headers['cache-control']).toBe('no-cache');
    expect(first.headers['x-accel-buffering']).toBe('no');
    const initial = await waitFor('the initial id', () => first.lastEventId() || undefined);
    expect([...parseCursor(initial)!.keys()]).toEqual(api.streams.partitionsOf(account.project_id, account.account_id));

    const otherAccount = asAccountId(`acc_other_${env.id}`);
    const noise = () => [
      event('message.received', { project_id: asProjectId(neighbour) }),
      event('qr_code', { project_id: asProjectId(neighbour) }),
      accountEvent({ account_id: otherAccount }),
      event('message.sent', { account_id: otherAccount, project_id: asProjectId(`prj_other_${env.id}`) }),
      event('message.delivered', { trigger: 'test' }),
      event('connect.completed', { scope: 'connection' }),
    ];
    const before = [event('message.received'), event('qr_code', { payload_json: '{"qr":"2@abc"}' }), accountEvent(), event('instance.status')];
    await produce([...noise(), ...before]);
    await expectExactly(first, before);

    first.close();
    await first.ended;
    await waitFor('the hub to release the client', () => api.streams.stats().subscribers === 0);

    const missed = [event('message.sent'), accountEvent({ event_type: 'advisory.published' }), event('pairing_code', { payload_json: '{"code":"ABCD1234"}' })];
    await produce([...noise(), ...missed, ...noise()]);
    const catchUps = api.streams.stats().logCatchUps;
    const again = await connect(base, '/stream', account.api_key, first.lastEventId());
    expect(again.status).toBe(200);
    await waitFor('the first frame', () => again.text().length > 0);
    expect(again.text().startsWith(`id: ${first.lastEventId()}\n\n`), 'the stream starts where the client stood').toBe(true);
    await expectExactly(again, missed);
    const after = [event('message.read'), accountEvent({ payload_json: '{"percent":90}' })];
    await produce([...after, ...noise()]);
    await expectExactly(again, [...missed, ...after]);
    expect(api.streams.stats().logCatchUps).toBe(catchUps);
    again.close();
  });

  it('reads from the log a gap older than what the hub holds, then goes on live, each event once and in order', async () => {
    const small = await listeningApi({ bufferPerPartition: 2 });
    let stopped = false;
    try {
      const first = await connect(small.base, '/stream', account.api_key);
      const initial = await waitFor('the initial id', () => first.lastEventId() || undefined);
      first.close();
      await waitFor('the hub to release the client', () => small.api.streams.stats().subscribers === 0);

      const gap = [
        ...Array.from({ length: 8 }, (_, i) => event('message.received', { payload_json: JSON.stringify({ type: 'text', body: `gap ${i}` }) })),
        accountEvent(),
        accountEvent({ payload_json: '{"percent":100}' }),
        accountEvent({ event_type: 'advisory.published', payload_json: '{"title":"t"}' }),
      ];
      await produce(gap);
      await waitFor('the hub to hold more than its buffer', () => small.api.streams.position(partitionOf(account.project_id, PARTITIONS)) > parseCursor(initial)!.get(partitionOf(account.project_id, PARTITIONS))! + 2);

      // The query parameter stands in for the header (for clients that cannot set one).
      const resumed = await connect(small.base, `/stream?last_event_id=${encodeURIComponent(initial)}`, account.api_key);
      expect(resumed.status).toBe(200);
      await waitFor('the first frame', () => resumed.text().length > 0);
      expect(resumed.text().startsWith(`id: ${initial}\n\n`), 'the stream starts where the client stood').toBe(true);
      const live = [event('message.delivered'), accountEvent({ payload_json: '{"percent":80,"again":true}' })];
      await waitFor('the catch-up to start', () => small.api.streams.stats().logCatchUps === 1);
      await produce(live);
      await expectExactly(resumed, [...gap, ...live]);

      // Stopping the API ends open streams instead of waiting for them.
      stopped = true;
      await small.api.stop();
      await resumed.ended;
      expect(small.api.streams.stats().subscribers).toBe(0);
    } finally {
      if (!stopped) await small.api.stop();
    }
  });

  it('sends heartbeats, and moves the id on while only other projects write to the partition', async () => {
    const client = await connect(base, '/stream', account.api_key);
    const initial = await waitFor('the initial id', () => client.lastEventId() || undefined);
    await waitFor('two heartbeats', () => client.text().split(': ping\n\n').length > 2);
    await produce([event('message.received', { project_id: asProjectId(neighbour) }), event('message.sent', { project_id: asProjectId(neighbour) })]);
    const moved = await waitFor('the id to move on', () => (client.lastEventId() !== initial ? client.lastEventId() : undefined));
    const projectPartition = partitionOf(account.project_id, PARTITIONS);
    expect(parseCursor(moved)!.get(projectPartition)).toBe(parseCursor(initial)!.get(projectPartition)! + 2);
    expect(client.events).toEqual([]);
    client.close();
  });

  it('mirrors webhooks on /webhooks/listen: no stream-only or test events, manual ones kept, filtered by events=', async () => {
    const all = await connect(base, '/webhooks/listen', account.api_key);
    const filtered = await connect(base, '/webhooks/listen?events=message.received,usage.threshold', account.api_key);
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toBe('text/event-stream');
    await waitFor('both initial ids', () => all.lastEventId() !== '' && filtered.lastEventId() !== '');

    const received = event('message.received');
    const manual = event('message.sent', { trigger: 'manual' });
    const threshold = accountEvent();
    await produce([
      event('qr_code'),
      event('pairing_code'),
      event('instance.status'),
      event('message.received', { trigger: 'test', webhook_id: null }),
      received,
      manual,
      threshold,
    ]);
    const sentinel = event('group.joined');
    await produce([sentinel]);
    await expectExactly(all, [received, manual, threshold, sentinel]);
    await expectExactly(filtered, [received, threshold]);
    all.close();
    filtered.close();
    await waitFor('the hub to release both clients', () => api.streams.stats().subscribers === 0);
  });

  it('refuses partner keys, keys without events:read, missing keys, unknown event types and ids that are not cursors of the stream', async () => {
    await waitFor('earlier clients released', () => api.streams.stats().subscribers === 0);
    for (const path of ['/stream', '/webhooks/listen']) {
      const partner = await connect(base, path, partnerKey);
      expect(partner.status).toBe(403);
      expect(JSON.parse(await partner.ended.then(() => partner.text()))).toMatchObject({ code: 'forbidden' });
      expect((await connect(base, path, narrowKey)).status).toBe(403);
      expect((await connect(base, path, undefined)).status).toBe(401);
      for (const bad of ['nonsense', '1-2-3', '99999-1.0-1', `${partitionOf(account.project_id, PARTITIONS)}-5`]) {
        const refused = await connect(base, path, account.api_key, bad);
        expect(refused.status, bad).toBe(400);
        expect(JSON.parse(await refused.ended.then(() => refused.text()))).toMatchObject({ code: 'invalid_request' });
      }
    }
    const unknown = await connect(base, '/webhooks/listen?events=message.received,qr_code', account.api_key);
    expect(unknown.status).toBe(400);
    expect(await unknown.ended.then(() => unknown.text())).toContain('qr_code');
    expect(api.streams.stats().subscribers).toBe(0);
  });

  it('holds at most MAX_STREAMS_PER_KEY streams open per key, and frees a place when one closes', async () => {
    await waitFor('earlier clients released', () => api.streams.stats().subscribers === 0);
    const clients = await Promise.all(Array.from({ length: MAX_STREAMS_PER_KEY }, () => connect(base, '/stream', account.api_key)));
    expect(clients.map((c) => c.status)).toEqual(clients.map(() => 200));
    const over = await connect(base, '/webhooks/listen', account.api_key);
    expect(over.status).toBe(429);
    expect(JSON.parse(await over.ended.then(() => over.text()))).toMatchObject({ code: 'rate_limited' });
    clients[0]!.close();
    await waitFor('a place freed', () => api.streams.stats().subscribers === MAX_STREAMS_PER_KEY - 1);
    const next = await connect(base, '/stream', account.api_key);
    expect(next.status).toBe(200);
    for (const client of [...clients, next]) client.close();
    await waitFor('every client released', () => api.streams.stats().subscribers === 0);
  });

  it('documents both streams in the OpenAPI document as text/event-stream', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, { get?: { responses: Record<string, { content?: object }> } }> }>();
    for (const path of ['/stream', '/webhooks/listen']) {
      expect(Object.keys(doc.paths[path]?.get?.responses['200']?.content ?? {}), path).toEqual(['text/event-stream']);
    }
  });

  it('ends a stream once its key is revoked', async () => {
    const created = await api.app.inject({ method: 'POST', url: '/keys', headers: { authorization: `Bearer ${account.api_key}` }, payload: { role: 'agent', scopes: ['events:read'] } });
    const { id, api_key } = created.json<{ id: string; api_key: string }>();
    const client = await connect(base, '/stream', api_key);
    expect(client.status).toBe(200);
    await waitFor('the initial id', () => client.lastEventId() !== '');
    const revoked = await api.app.inject({ method: 'DELETE', url: `/keys/${id}`, headers: { authorization: `Bearer ${account.api_key}` } });
    expect(revoked.statusCode).toBe(200);
    await client.ended;
    await waitFor('the hub to release the client', () => api.streams.stats().subscribers === 0);
  });
});
