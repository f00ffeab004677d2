import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../processors/config/accounts.js';
import { Directory } from '../../processors/directory.js';
import { DeadlineExceeded } from '../../shared/deadline.js';
import { issueKey } from '../../processors/config/keys.js';
import { changeProjectWebhooks } from '../../api/webhooks/project-lock.js';
import { webhookRecord } from '../../processors/config/webhooks.js';
import { deliveriesProjection, replayProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asProjectId, newId } from '../../schemas/ids.js';
import type { DeliveryAttempt, DeliveryOutcome, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, deliveryRetryTier, endOffsets, topicName, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { partnerIssuedKey } from '../support/partner-records.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

interface WebhookBody {
  id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
}
interface Project {
  account_id: string;
  project_id: string;
  api_key: string;
}

/**
 * The webhooks API on the real stack: registration in `gw.config` (secret sealed, shown once),
 * one webhook per event per project under concurrency and across API processes, URL and event
 * validation, reach, the sample events written to `gw.events`, and the deliveries projection of
 * `gw.deliveries.attempts` with redelivery through the first retry tier.
 */
describe('webhooks API', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let second: RunningApi;
  let deliveries: RunningProjection;
  const readers: TopicConsumer[] = [];
  const events = new Map<string, { key: string | null; value: PublicEvent }>();
  const tasks = new Map<string, { key: string | null; value: DeliveryTask }>();

  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, body?: unknown, on: RunningApi = api) =>
    on.app.inject({ method, url, headers: auth(key), ...(body !== undefined && { payload: body as object }) });

  async function newProject(locale?: 'de'): Promise<Project> {
    const created = await createAccount(clients.producer, { name: 'Acme', email: 'ops@acme.test', locale }, async () => undefined);
    for (const running of [api, second]) {
      await running.directory.until(() => canSignIn(running.directory, created.account_id));
    }
    return created;
  }

  async function agentKey(project: Project, scopes: string[]): Promise<string> {
    const issued = issueKey({
      accountId: asAccountId(project.account_id),
      projectId: asProjectId(project.project_id),
      role: 'agent',
      scopes,
    });
    await clients.producer.send(topics.config, [{ key: issued.id, value: issued.record }]);
    await api.directory.until(() => api.directory.key(issued.id) !== undefined);
    return issued.apiKey;
  }

  async function register(project: Project, body: Record<string, unknown>, on: RunningApi = api): Promise<WebhookBody> {
    const response = await call('POST', '/webhooks', project.api_key, body, on);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<WebhookBody>();
  }

  async function follow<V>(spec: typeof topics.events | ReturnType<typeof deliveryRetryTier>, into: Map<string, { key: string | null; value: V }>, id: (v: V) => string) {
    const reader = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.${spec.name}`, topics: [spec], fromBeginning: true });
    await reader.run(async (batch) => {
      for (const r of batch.records) if (r.decoded.ok && r.decoded.value) into.set(id(r.decoded.value as V), { key: r.key, value: r.decoded.value as V });
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    readers.push(reader);
  }

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    api = await startApi(clients, { listen: false });
    second = await startApi(clients, { listen: false });
    deliveries = await runProjection(clients, deliveriesProjection);
    await follow<PublicEvent>(topics.events, events, (e) => e.event_id);
    await follow<DeliveryTask>(deliveryRetryTier(10_000), tasks, (t) => t.delivery_id);
  });

  afterAll(async () => {
    for (const reader of readers) await reader.stop();
    await deliveries?.stop();
    await second?.stop();
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  describe('registration', () => {
    it('creates, lists, reads, changes and deletes a webhook; the secret is sealed and shown only at creation', async () => {
      const project = await newProject();
      const created = await register(project, {
        url: 'https://hooks.example.com/in',
        event_types: ['message.received', 'message.read', 'message.received'],
        description: 'CRM sync',
      });
      expect(created).toMatchObject({
        url: 'https://hooks.example.com/in',
        event_types: ['message.received', 'message.read'],
        enabled: true,
        description: 'CRM sync',
      });
      expect(created.id).toMatch(/^wh_/);
      expect(created.secret).toMatch(/^whsec_/);
      expect(created.created_at).toBe(created.updated_at);

      const stored = api.directory.webhooks.get(created.id)!;
      expect(stored.secret_ciphertext).not.toContain(created.secret);
      expect(api.cipher.open(stored.secret_ciphertext)).toBe(created.secret);
      // Every process holds it: the other API process reads the same record.
      await second.directory.until(() => second.directory.webhooks.has(created.id));

      const list = await call('GET', '/webhooks', project.api_key);
      expect(list.statusCode).toBe(200);
      const { secret: _, ...withoutSecret } = created;
      expect(list.json()).toEqual({ data: [withoutSecret] });
      expect(list.body).not.toContain(created.secret!);
      expect(list.body).not.toContain('secret');
      const one = await call('GET', `/webhooks/${created.id}`, project.api_key);
      expect(one.json()).toEqual(withoutSecret);

      const patched = await call('PATCH', `/webhooks/${created.id}`, project.api_key, { url: 'https://hooks.example.com/v2', enabled: false, description: null });
      expect(patched.statusCode, patched.body).toBe(200);
      const changed = patched.json<WebhookBody>();
      expect(changed).toMatchObject({ url: 'https://hooks.example.com/v2', enabled: false, description: null, event_types: ['message.received', 'message.read'] });
      expect(changed.created_at).toBe(created.created_at);
      expect(changed.updated_at >= created.updated_at).toBe(true);
      expect(changed).not.toHaveProperty('secret');
      expect(api.cipher.open(api.directory.webhooks.get(created.id)!.secret_ciphertext)).toBe(created.secret);

      const deleted = await call('DELETE', `/webhooks/${created.id}`, project.api_key);
      expect(deleted.statusCode).toBe(204);
      expect((await call('GET', `/webhooks/${created.id}`, project.api_key)).statusCode).toBe(404);
      expect((await call('GET', '/webhooks', project.api_key)).json()).toEqual({ data: [] });
      expect((await call('PATCH', `/webhooks/${created.id}`, project.api_key, { enabled: true })).statusCode).toBe(404);
      expect((await call('DELETE', `/webhooks/${created.id}`, project.api_key)).statusCode).toBe(404);
    });

    it('keeps created_at when the compacted topic holds only the last record of a webhook', async () => {
      const project = await newProject();
      const id = newId('wh');
      const createdAt = Date.UTC(2029, 5, 1);
      // What compaction leaves of a webhook changed since its creation: its last record alone.
      const last = webhookRecord({ accountId: project.account_id, projectId: project.project_id }, id, {
        url: 'https://hooks.example.com/a', event_types: [], secret_ciphertext: api.cipher.seal('whsec_x'), enabled: false,
        description: null, created_at: createdAt,
      });
      await clients.producer.send(topics.config, [{ key: id, value: last }]);
      await api.directory.applied(id, last.event_id);
      const read = await call('GET', `/webhooks/${id}`, project.api_key);
      expect(read.json()).toMatchObject({ created_at: new Date(createdAt).toISOString(), updated_at: new Date(last.occurred_at).toISOString() });
    });

    it('rotates the secret: the new one is shown once and the old one is gone at once', async () => {
      const project = await newProject();
      const created = await register(project, { url: 'https://hooks.example.com/r' });
      const rotated = await call('POST', `/webhooks/${created.id}/rotate-secret`, project.api_key);
      expect(rotated.statusCode, rotated.body).toBe(200);
      const body = rotated.json<WebhookBody>();
      expect(body.secret).toMatch(/^whsec_/);
      expect(body.secret).not.toBe(created.secret);
      expect(body).toMatchObject({ id: created.id, url: created.url, created_at: created.created_at });
      for (const running of [api, second]) {
        await running.directory.until(() => {
          const sealed = running.directory.webhooks.get(created.id)?.secret_ciphertext;
          return sealed !== undefined && running.cipher.open(sealed) === body.secret;
        });
      }
      expect((await call('GET', `/webhooks/${created.id}`, project.api_key)).body).not.toContain(body.secret!);
      expect((await call('POST', '/webhooks/wh_nope/rotate-secret', project.api_key)).statusCode).toBe(404);
    });

    it('refuses a body on the routes that take none, and changes nothing; an empty object passes', async () => {
      const project = await newProject();
      const created = await register(project, { url: 'https://hooks.example.com/nobody' });
      const chosen = await call('POST', `/webhooks/${created.id}/rotate-secret`, project.api_key, { secret: 'whsec_chosen_by_the_caller' });
      expect([chosen.statusCode, chosen.json<{ code: string }>().code]).toEqual([400, 'invalid_request']);
      const sealed = api.directory.webhooks.get(created.id)?.secret_ciphertext;
      expect(sealed !== undefined && api.cipher.open(sealed)).toBe(created.secret);
      expect((await call('DELETE', `/webhooks/${created.id}`, project.api_key, [1])).statusCode).toBe(400);
      expect((await call('GET', `/webhooks/${created.id}`, project.api_key)).statusCode).toBe(200);
      expect((await call('POST', `/webhooks/${created.id}/rotate-secret`, project.api_key, {})).statusCode).toBe(200);
    });

    it('documents every route in the OpenAPI document', async () => {
      const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining([
          '/webhooks', '/webhooks/{id}', '/webhooks/{id}/rotate-secret', '/webhooks/{id}/test', '/webhooks/trigger',
          '/webhooks/{id}/deliveries', '/webhooks/{id}/deliveries/{delivery_id}', '/webhooks/{id}/deliveries/{delivery_id}/redeliver',
        ]),
      );
      expect(Object.keys(doc.paths['/webhooks/{id}']!).sort()).toEqual(['delete', 'get', 'patch']);
    });

    it('refuses a webhook of another project with 404', async () => {
      const mine = await newProject();
      const theirs = await newProject();
      const created = await register(theirs, { url: 'https://hooks.example.com/t' });
      for (const [method, url] of [
        ['GET', `/webhooks/${created.id}`],
        ['PATCH', `/webhooks/${created.id}`],
        ['DELETE', `/webhooks/${created.id}`],
        ['POST', `/webhooks/${created.id}/rotate-secret`],
        ['POST', `/webhooks/${created.id}/test`],
        ['GET', `/webhooks/${created.id}/deliveries`],
      ] as const) {
        const response = await call(method, url, mine.api_key, method === 'PATCH' ? { enabled: false } : undefined);
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        expect(response.json()).toMatchObject({ code: 'not_found' });
      }
    });
  });

  describe('one webhook per event (spec 6.2)', () => {
    const taken = async (response: { statusCode: number; json<T>(): T }, event: string) => {
      expect(response.statusCode).toBe(409);
      const body = response.json<{ code: string; message: string }>();
      expect(body.code).toBe('event_taken');
      expect(body.message).toContain(event);
    };

    it('refuses an overlapping event, naming it', async () => {
      const project = await newProject();
      await register(project, { url: 'https://a.example.com/', event_types: ['message.received', 'message.read'] });
      await taken(await call('POST', '/webhooks', project.api_key, { url: 'https://b.example.com/', event_types: ['group.joined', 'message.read'] }), 'message.read');
      await register(project, { url: 'https://b.example.com/', event_types: ['group.joined'] });
    });

    it('names the event in the account language', async () => {
      const project = await newProject('de');
      await register(project, { url: 'https://a.example.com/', event_types: ['campaign.paused'] });
      const response = await call('POST', '/webhooks', project.api_key, { url: 'https://b.example.com/', event_types: ['campaign.paused'] });
      expect(response.json()).toMatchObject({ code: 'event_taken', locale: 'de', message: expect.stringContaining('Ereignis campaign.paused') as unknown });
    });

    it('lets an empty list take every event, so it collides with any other webhook', async () => {
      const all = await newProject();
      await register(all, { url: 'https://a.example.com/' });
      await taken(await call('POST', '/webhooks', all.api_key, { url: 'https://b.example.com/', event_types: ['usage.threshold'] }), 'usage.threshold');
      await taken(await call('POST', '/webhooks', all.api_key, { url: 'https://b.example.com/', event_types: [] }), 'message.received');

      const one = await newProject();
      await register(one, { url: 'https://a.example.com/', event_types: ['group.left'] });
      await taken(await call('POST', '/webhooks', one.api_key, { url: 'https://b.example.com/' }), 'group.left');
    });

    it('counts a disabled webhook, and frees its events once deleted', async () => {
      const project = await newProject();
      const off = await register(project, { url: 'https://a.example.com/', event_types: ['message.failed'], enabled: false });
      await taken(await call('POST', '/webhooks', project.api_key, { url: 'https://b.example.com/', event_types: ['message.failed'] }), 'message.failed');
      expect((await call('DELETE', `/webhooks/${off.id}`, project.api_key)).statusCode).toBe(204);
      await register(project, { url: 'https://b.example.com/', event_types: ['message.failed'] });
    });

    it('refuses a PATCH into a collision and allows one that keeps its own events', async () => {
      const project = await newProject();
      const a = await register(project, { url: 'https://a.example.com/', event_types: ['message.sent'] });
      const b = await register(project, { url: 'https://b.example.com/', event_types: ['message.delivered'] });
      await taken(await call('PATCH', `/webhooks/${b.id}`, project.api_key, { event_types: ['message.delivered', 'message.sent'] }), 'message.sent');
      await taken(await call('PATCH', `/webhooks/${b.id}`, project.api_key, { event_types: [] }), 'message.sent');
      expect((await call('GET', `/webhooks/${b.id}`, project.api_key)).json()).toMatchObject({ event_types: ['message.delivered'] });
      const same = await call('PATCH', `/webhooks/${a.id}`, project.api_key, { event_types: ['message.sent', 'message.read'] });
      expect(same.statusCode, same.body).toBe(200);
      expect(same.json()).toMatchObject({ event_types: ['message.sent', 'message.read'] });
    });

    it('lets stream-only names through without taking anything', async () => {
      const project = await newProject();
      const qr = await register(project, { url: 'https://a.example.com/', event_types: ['qr_code', 'pairing_code'] });
      expect(qr.event_types).toEqual(['qr_code', 'pairing_code']);
      await register(project, { url: 'https://b.example.com/', event_types: ['qr_code'] });
      await register(project, { url: 'https://c.example.com/' });
    });

    it('holds for concurrent creates in one process: exactly one wins', async () => {
      const project = await newProject();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => call('POST', '/webhooks', project.api_key, { url: `https://h${i}.example.com/`, event_types: ['contact.opted_out'] })),
      );
      expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      expect((await call('GET', '/webhooks', project.api_key)).json<{ data: unknown[] }>().data).toHaveLength(1);
    });

    it('holds across two API processes, each with its own directory', async () => {
      const project = await newProject();
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          call('POST', '/webhooks', project.api_key, { url: `https://h${i}.example.com/`, event_types: i % 2 === 0 ? ['group.joined'] : [] }, i % 2 === 0 ? api : second),
        ),
      );
      expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
      expect(answers.filter((a) => a.statusCode === 409)).toHaveLength(5);
      for (const running of [api, second]) {
        await waitUntilSeen(running, project, 1);
      }
    });

    it('serialises changes across processes without refusing those that do not collide', async () => {
      const project = await newProject();
      const types = ['group.joined', 'group.left', 'group.participant_added', 'group.participant_removed', 'group.participant_promoted', 'group.participant_demoted'];
      const answers = await Promise.all(
        types.map((type, i) => call('POST', '/webhooks', project.api_key, { url: `https://h${i}.example.com/`, event_types: [type] }, i % 2 === 0 ? api : second)),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(types.map(() => 201));
      // A PATCH in one process sees what the other just wrote.
      const [first] = answers.map((a) => a.json<WebhookBody>());
      await taken(await call('PATCH', `/webhooks/${first!.id}`, project.api_key, { event_types: ['group.joined', 'group.left'] }, second), 'group.left');
    });

    it('checks only once the directory has applied all that the log held when the lock was taken', async () => {
      const project = await newProject();
      // A directory that has applied nothing yet, as in a process far behind the log.
      const behind = new Directory();
      const ctx = { clients, directory: behind };
      // Not ready: the API answers this with 503 service_unavailable.
      await expect(changeProjectWebhooks(ctx, project.project_id, async () => 'checked')).rejects.toBeInstanceOf(DeadlineExceeded);

      const change = changeProjectWebhooks(ctx, project.project_id, async () => 'checked');
      for (const [partition, end] of await endOffsets(clients.kafka, topicName(topics.config, clients.serdes.prefix))) behind.advance(partition, end);
      behind.settled();
      await expect(change).resolves.toBe('checked');
    });

    async function waitUntilSeen(running: RunningApi, project: Project, count: number) {
      await running.directory.until(() => running.directory.webhooksOf(project.project_id).length === count);
    }
  });

  describe('validation and reach', () => {
    it.each([
      ['not a url', 'absolute'],
      ['ftp://files.example.com/x', 'https or http'],
      ['https://user:pw@hooks.example.com/', 'user name or password'],
      ['http://localhost:8080/hook', 'loopback'],
      ['http://127.0.0.1:8080/hook', 'loopback'],
      ['http://[::1]/hook', 'loopback'],
      ['http://10.0.0.5/hook', 'private'],
      ['http://169.254.169.254/latest', 'link-local'],
      [`https://hooks.example.com/${'a'.repeat(2048)}`, '2048'],
    ].map(([url = '', reason = '']) => ({ url, reason, shown: url.length > 60 ? `${url.slice(0, 40)}… (${url.length} characters)` : url })))(
      'refuses the URL $shown with 400 invalid_request',
      async ({ url, reason }) => {
        const project = await newProject();
        const response = await call('POST', '/webhooks', project.api_key, { url });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(reason) as unknown });
      },
    );

    it('refuses a private URL in a PATCH too', async () => {
      const project = await newProject();
      const created = await register(project, { url: 'https://hooks.example.com/' });
      const response = await call('PATCH', `/webhooks/${created.id}`, project.api_key, { url: 'http://192.168.1.20/' });
      expect(response.statusCode).toBe(400);
      expect((await call('GET', `/webhooks/${created.id}`, project.api_key)).json()).toMatchObject({ url: 'https://hooks.example.com/' });
    });

    it('accepts private URLs when the outbound guard allows them', async () => {
      const relaxed = await startApi({ ...clients, config: { ...clients.config, outbound: { allowPrivateNetwork: true, allowCidrs: [] } } }, { listen: false });
      try {
        const project = await newProject();
        await relaxed.directory.until(() => canSignIn(relaxed.directory, project.account_id));
        const response = await call('POST', '/webhooks', project.api_key, { url: 'http://localhost:4000/hooks' }, relaxed);
        expect(response.statusCode, response.body).toBe(201);
      } finally {
        await relaxed.stop();
      }
    });

    it('refuses unknown event types and unknown fields with 400 invalid_request naming them', async () => {
      const project = await newProject();
      const unknown = await call('POST', '/webhooks', project.api_key, { url: 'https://a.example.com/', event_types: ['message.received', 'message.vanished'] });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('message.vanished') as unknown });
      const extra = await call('POST', '/webhooks', project.api_key, { url: 'https://a.example.com/', events: ['message.received'] });
      expect(extra.statusCode).toBe(400);
      expect(extra.json()).toMatchObject({ code: 'invalid_request' });
      const empty = await call('POST', '/webhooks', project.api_key, {});
      expect(empty.statusCode).toBe(400);
      const created = await register(project, { url: 'https://a.example.com/' });
      const nothing = await call('PATCH', `/webhooks/${created.id}`, project.api_key, {});
      expect(nothing.statusCode).toBe(400);
      expect((await call('GET', '/webhooks', project.api_key)).json<{ data: unknown[] }>().data).toHaveLength(1);
    });

    it('answers 403 forbidden to partner-issued keys on every webhook route, whatever their scopes', async () => {
      const project = await newProject();
      const created = await register(project, { url: 'https://a.example.com/' });
      const partner = await partnerIssuedKey(clients, api, { accountId: project.account_id, projectId: project.project_id, scopes: ['webhooks:read', 'webhooks:write', 'instances:read'] });
      expect((await call('GET', '/instances', partner)).statusCode).toBe(200);
      for (const [method, url, body] of [
        ['GET', '/webhooks', undefined],
        ['POST', '/webhooks', { url: 'https://b.example.com/' }],
        ['GET', `/webhooks/${created.id}`, undefined],
        ['PATCH', `/webhooks/${created.id}`, { enabled: false }],
        ['DELETE', `/webhooks/${created.id}`, undefined],
        ['POST', `/webhooks/${created.id}/rotate-secret`, undefined],
        ['POST', `/webhooks/${created.id}/test`, {}],
        ['POST', '/webhooks/trigger', { event_type: 'message.received' }],
        ['GET', `/webhooks/${created.id}/deliveries`, undefined],
      ] as const) {
        const response = await call(method, url, partner, body);
        expect(response.statusCode, `${method} ${url}`).toBe(403);
        expect(response.json()).toMatchObject({ code: 'forbidden' });
      }
    });

    it('needs webhooks:read to read and webhooks:write to change', async () => {
      const project = await newProject();
      const created = await register(project, { url: 'https://a.example.com/' });
      const reader = await agentKey(project, ['webhooks:read']);
      const other = await agentKey(project, ['instances:read']);
      expect((await call('GET', '/webhooks', reader)).statusCode).toBe(200);
      expect((await call('GET', `/webhooks/${created.id}/deliveries`, reader)).statusCode).toBe(200);
      expect((await call('GET', '/webhooks', other)).statusCode).toBe(403);
      for (const [method, url, body] of [
        ['POST', '/webhooks', { url: 'https://b.example.com/' }],
        ['PATCH', `/webhooks/${created.id}`, { enabled: false }],
        ['DELETE', `/webhooks/${created.id}`, undefined],
        ['POST', `/webhooks/${created.id}/rotate-secret`, undefined],
        ['POST', `/webhooks/${created.id}/test`, {}],
        ['POST', '/webhooks/trigger', { event_type: 'message.received' }],
      ] as const) {
        const response = await call(method, url, reader, body);
        expect(response.statusCode, `${method} ${url}`).toBe(403);
      }
      const writer = await agentKey(project, ['webhooks:write']);
      expect((await call('PATCH', `/webhooks/${created.id}`, writer, { enabled: false })).statusCode).toBe(200);
    });
  });

  describe('sample events', () => {
    const written = (eventId: string) => waitFor(`event ${eventId} on gw.events`, () => events.get(eventId));

    it('writes a test event for the one webhook to gw.events, keyed by project', async () => {
      const project = await newProject();
      const hook = await register(project, { url: 'https://a.example.com/', event_types: ['qr_code', 'group.joined', 'message.read'] });
      const bare = await api.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/test`, headers: auth(project.api_key) });
      expect(bare.statusCode, bare.body).toBe(202);
      const fired = bare.json<{ event_id: string; event_type: string }>();
      expect(fired.event_type).toBe('group.joined');
      const { key, value } = await written(fired.event_id);
      expect(key).toBe(project.project_id);
      expect(value).toMatchObject({
        event_id: fired.event_id,
        event_type: 'group.joined',
        account_id: project.account_id,
        project_id: project.project_id,
        trigger: 'test',
        webhook_id: hook.id,
      });
      expect(JSON.parse(value.payload_json)).toBeTypeOf('object');

      const chosen = await call('POST', `/webhooks/${hook.id}/test`, project.api_key, { event_type: 'message.sent' });
      expect(chosen.statusCode).toBe(202);
      expect((await written(chosen.json<{ event_id: string }>().event_id)).value).toMatchObject({ event_type: 'message.sent', trigger: 'test', webhook_id: hook.id });

      const other = await newProject();
      const all = await register(other, { url: 'https://b.example.com/' });
      const defaulted = await call('POST', `/webhooks/${all.id}/test`, other.api_key, {});
      expect(defaulted.json()).toMatchObject({ event_type: 'message.received' });

      for (const event_type of ['qr_code', 'message.vanished']) {
        const refused = await call('POST', `/webhooks/${hook.id}/test`, project.api_key, { event_type });
        expect(refused.statusCode).toBe(400);
        expect(refused.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(event_type) as unknown });
      }
    });

    it('triggers a manual event for the webhooks listening to it now', async () => {
      const project = await newProject();
      const reads = await register(project, { url: 'https://a.example.com/', event_types: ['message.read'] });
      await register(project, { url: 'https://b.example.com/', event_types: ['message.sent'] });
      await register(project, { url: 'https://c.example.com/', event_types: ['group.left'], enabled: false });
      const response = await call('POST', '/webhooks/trigger', project.api_key, { event_type: 'message.read' });
      expect(response.statusCode, response.body).toBe(202);
      const body = response.json<{ event_id: string; event_type: string; webhook_ids: string[] }>();
      expect(body).toMatchObject({ event_type: 'message.read', webhook_ids: [reads.id] });
      const { key, value } = await written(body.event_id);
      expect(key).toBe(project.project_id);
      expect(value).toMatchObject({ event_type: 'message.read', trigger: 'manual', webhook_id: null, project_id: project.project_id });

      const none = await call('POST', '/webhooks/trigger', project.api_key, { event_type: 'group.left' });
      expect(none.json()).toMatchObject({ event_type: 'group.left', webhook_ids: [] });

      for (const event_type of ['pairing_code', 'instance.status', 'nope']) {
        const refused = await call('POST', '/webhooks/trigger', project.api_key, { event_type });
        expect(refused.statusCode).toBe(400);
        expect(refused.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(event_type) as unknown });
      }
      expect((await call('POST', '/webhooks/trigger', project.api_key, {})).statusCode).toBe(400);
    });

    it('names every webhook of the account for an account event, as the dispatcher delivers it', async () => {
      const project = await newProject();
      const here = await register(project, { url: 'https://a.example.com/', event_types: ['usage.threshold'] });
      // A second project of the same account, with its own owner key.
      const sibling = issueKey({ accountId: asAccountId(project.account_id), projectId: asProjectId(newId('prj')), role: 'owner', scopes: ['*'] });
      await clients.producer.send(topics.config, [{ key: sibling.id, value: sibling.record }]);
      await api.directory.until(() => api.directory.key(sibling.id) !== undefined);
      const there = await register({ ...project, api_key: sibling.apiKey }, { url: 'https://b.example.com/', event_types: ['usage.threshold', 'message.read'] });
      const account = await call('POST', '/webhooks/trigger', project.api_key, { event_type: 'usage.threshold' });
      expect(account.json<{ webhook_ids: string[] }>().webhook_ids.sort()).toEqual([here.id, there.id].sort());
      const projectOnly = await call('POST', '/webhooks/trigger', project.api_key, { event_type: 'message.read' });
      expect(projectOnly.json()).toMatchObject({ webhook_ids: [] });
    });
  });

  describe('deliveries', () => {
    let project: Project;
    let hook: WebhookBody;
    let otherHook: WebhookBody;
    const base = Date.UTC(2030, 0, 1);
    const bodyOf = (eventId: string) => JSON.stringify({ event_id: eventId, event_type: 'message.received', timestamp: new Date(base).toISOString(), payload: { type: 'text', body: 'hi' } });

    function attempt(
      delivery: { id: string; eventId: string; webhookId?: string },
      n: number,
      outcome: DeliveryOutcome,
      at: number,
      extra: Partial<DeliveryAttempt> = {},
    ): DeliveryAttempt {
      return {
        event_id: asEventId(delivery.eventId),
        occurred_at: at,
        account_id: asAccountId(project.account_id),
        project_id: asProjectId(project.project_id),
        instance_id: null,
        attempt_id: newId('att'),
        delivery_id: delivery.id,
        target_kind: 'account_webhook',
        target_id: delivery.webhookId ?? hook.id,
        event_type: 'message.received',
        url: 'https://a.example.com/',
        attempt: n,
        trigger: 'scheduled',
        outcome,
        response_status: outcome === 'delivered' ? 200 : outcome === 'timed_out' ? null : 500,
        response_body_excerpt: outcome === 'delivered' ? 'ok' : outcome === 'timed_out' ? null : 'boom',
        error: outcome === 'timed_out' ? 'timed out after 10000 ms' : null,
        duration_ms: 12,
        next_attempt_at: outcome === 'delivered' || outcome === 'failed_final' ? null : at + 10_000,
        body_json: n === 1 ? bodyOf(delivery.eventId) : null,
        ...extra,
      };
    }
    const send = (records: DeliveryAttempt[]) => clients.producer.send(topics.deliveryAttempts, records.map((value) => ({ key: value.target_id, value })));
    const settle = () => waitUntilCaughtUp(clients, 'deliveries', [topicName(topics.deliveryAttempts, clients.serdes.prefix)], Date.now() + 30_000);
    const list = async (query = '') => {
      const response = await call('GET', `/webhooks/${hook.id}/deliveries${query}`, project.api_key);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
    };

    const retried = { id: newId('dlv'), eventId: newId('evt') };
    const waiting = { id: newId('dlv'), eventId: newId('evt') };
    const given = { id: newId('dlv'), eventId: newId('evt') };
    const elsewhere = { id: newId('dlv'), eventId: newId('evt') };

    beforeAll(async () => {
      project = await newProject();
      hook = await register(project, { url: 'https://a.example.com/', event_types: ['message.received'] });
      otherHook = await register(project, { url: 'https://b.example.com/', event_types: ['message.sent'] });
      const first = attempt(retried, 1, 'failed_retryable', base);
      // Delivered on the second attempt; the first attempt's record also arrives twice (a redelivered batch).
      await send([first, attempt(retried, 2, 'delivered', base + 10_000)]);
      await send([first]);
      // Waiting for its second attempt.
      await send([attempt(waiting, 1, 'timed_out', base + 60_000)]);
      // Given up after its last attempt, whose record comes before the first's.
      await send([attempt(given, 2, 'failed_retryable', base + 130_000, { next_attempt_at: null })]);
      await send([attempt(given, 1, 'failed_retryable', base + 120_000)]);
      await send([attempt({ ...elsewhere, webhookId: otherHook.id }, 1, 'delivered', base + 180_000)]);
      await settle();
    });

    it('lists a webhook’s deliveries newest first, with their status and last attempt', async () => {
      const page = await list();
      expect(page.next_cursor).toBeNull();
      expect(page.data.map((d) => d.id)).toEqual([given.id, waiting.id, retried.id]);
      expect(page.data[2]).toEqual({
        id: retried.id,
        event_id: retried.eventId,
        event_type: 'message.received',
        trigger: 'scheduled',
        status: 'delivered',
        attempt_count: 2,
        last_attempt_at: new Date(base + 10_000).toISOString(),
        last_response_status: 200,
        last_error: null,
        last_response_excerpt: 'ok',
        next_attempt_at: null,
        created_at: new Date(base).toISOString(),
      });
      expect(page.data[1]).toMatchObject({
        status: 'pending', attempt_count: 1, last_response_status: null, last_error: 'timed out after 10000 ms',
        next_attempt_at: new Date(base + 70_000).toISOString(),
      });
      expect(page.data[0]).toMatchObject({
        status: 'failed', attempt_count: 2, last_response_status: 500, next_attempt_at: null,
        last_attempt_at: new Date(base + 130_000).toISOString(), created_at: new Date(base + 120_000).toISOString(),
      });
    });

    it('filters by status and pages with a cursor', async () => {
      expect((await list('?status=failed')).data.map((d) => d.id)).toEqual([given.id]);
      expect((await list('?status=pending')).data.map((d) => d.id)).toEqual([waiting.id]);
      expect((await list('?status=delivered')).data.map((d) => d.id)).toEqual([retried.id]);
      const bad = await call('GET', `/webhooks/${hook.id}/deliveries?status=lost`, project.api_key);
      expect(bad.statusCode).toBe(400);

      const seen: unknown[] = [];
      let cursor: string | null = null;
      do {
        const page = await list(`?limit=1${cursor === null ? '' : `&cursor=${cursor}`}`);
        expect(page.data).toHaveLength(1);
        seen.push(page.data[0]!.id);
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toEqual([given.id, waiting.id, retried.id]);
      expect((await call('GET', `/webhooks/${hook.id}/deliveries?cursor=garbage`, project.api_key)).statusCode).toBe(400);
    });

    it('shows one delivery with its attempts in order and the body posted', async () => {
      const response = await call('GET', `/webhooks/${hook.id}/deliveries/${given.id}`, project.api_key);
      expect(response.statusCode, response.body).toBe(200);
      const detail = response.json<{ status: string; body: unknown; attempts: Array<Record<string, unknown>> }>();
      expect(detail.status).toBe('failed');
      expect(detail.body).toEqual(JSON.parse(bodyOf(given.eventId)));
      expect(detail.attempts.map((a) => [a.attempt, a.outcome, a.timestamp])).toEqual([
        [1, 'failed_retryable', new Date(base + 120_000).toISOString()],
        [2, 'failed_retryable', new Date(base + 130_000).toISOString()],
      ]);
      expect(detail.attempts[0]).toMatchObject({ url: 'https://a.example.com/', response_status: 500, response_excerpt: 'boom', duration_ms: 12 });

      const twice = await call('GET', `/webhooks/${hook.id}/deliveries/${retried.id}`, project.api_key);
      expect(twice.json<{ attempts: unknown[] }>().attempts).toHaveLength(2);

      // A delivery of another webhook is not found under this one.
      expect((await call('GET', `/webhooks/${hook.id}/deliveries/${elsewhere.id}`, project.api_key)).statusCode).toBe(404);
      expect((await call('GET', `/webhooks/${otherHook.id}/deliveries/${elsewhere.id}`, project.api_key)).statusCode).toBe(200);
      expect((await call('GET', `/webhooks/${hook.id}/deliveries/dlv_nope`, project.api_key)).statusCode).toBe(404);
    });

    it('redelivers by writing a manual task with a new delivery id to the first retry tier', async () => {
      const before = Date.now();
      const response = await call('POST', `/webhooks/${hook.id}/deliveries/${given.id}/redeliver`, project.api_key);
      expect(response.statusCode, response.body).toBe(202);
      const { delivery_id } = response.json<{ delivery_id: string }>();
      expect(delivery_id).not.toBe(given.id);
      const { key, value } = await waitFor('the redelivery task', () => tasks.get(delivery_id));
      expect(key).toBe(hook.id);
      expect(value).toMatchObject({
        event_id: given.eventId,
        event_type: 'message.received',
        account_id: project.account_id,
        project_id: project.project_id,
        delivery_id,
        target_kind: 'account_webhook',
        target_id: hook.id,
        trigger: 'manual',
        attempt: 1,
        last_error: null,
        body_json: bodyOf(given.eventId),
      });
      expect(value.not_before).toBeGreaterThanOrEqual(before);
      expect(value.not_before).toBeLessThanOrEqual(Date.now());
      expect((await call('POST', `/webhooks/${hook.id}/deliveries/dlv_nope/redeliver`, project.api_key)).statusCode).toBe(404);
    });

    it('replays into the same tables as the live run', async () => {
      const dump = async () => ({
        deliveries: (await clients.pool.query('SELECT * FROM deliveries.deliveries ORDER BY delivery_id')).rows,
        attempts: (await clients.pool.query('SELECT * FROM deliveries.attempts ORDER BY attempt_id')).rows,
      });
      const before = await dump();
      expect(before.attempts).toHaveLength(6);
      await replayProjection(clients, deliveriesProjection, { deadlineMs: 120_000 });
      await settle();
      expect(await dump()).toEqual(before);
    });
  });
});
