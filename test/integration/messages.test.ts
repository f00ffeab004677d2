import type { Pool } from 'pg';
import { createRateLimiter, LEASE_MS } from '../../api/plugins/rate-limit.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../processors/config/accounts.js';
import { OtpKeys } from '../../connectors/network/index.js';
import { instancesProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState, InstanceStatus, SendCommand } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, topicName, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { IdempotencyKeys } from '../../api/messages/idempotency.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

/**
 * The public send API on the real stack: keys, scopes, the rate limit, idempotency, number choice
 * and the command each send writes to the log. Numbers are made connected by writing their state
 * to the log as a connector would.
 */
describe('sending through the API', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let instances: RunningProjection;
  let commandReader: TopicConsumer;
  const commands = new Map<string, SendCommand>();
  let account: { account_id: string; project_id: string; api_key: string };

  const auth = (key = account.api_key) => ({ authorization: `Bearer ${key}` });
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    api.app.inject({ method: 'POST', url, payload: body as object, headers: { ...auth(), ...headers } });

  async function number(status: InstanceStatus, projectId = account.project_id, accountId = account.account_id): Promise<string> {
    const id = newId('inst');
    const state: InstanceState = {
      event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: asAccountId(accountId), project_id: asProjectId(projectId),
      instance_id: asInstanceId(id), phone: '+5511900000000', nickname: null, status, previous_status: null, reason: null,
      health_score: 100, pool_ids: [], connector: 'sandbox', deleted: false,
    };
    await clients.producer.send(topics.instances, [{ key: id, value: state }]);
    await waitUntilCaughtUp(clients, 'instances', [topicName(topics.instances, clients.serdes.prefix)], Date.now() + 20_000);
    return id;
  }

  const command = (messageId: string) => waitFor(`the command of ${messageId}`, () => commands.get(messageId));

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    instances = await runProjection(clients, instancesProjection);
    api = await startApi(clients, { listen: false });
    account = await createAccount(clients.producer, { name: 'Acme', email: 'ops@acme.test' }, async () => undefined);
    await api.directory.until(() => canSignIn(api.directory, account.account_id));
    commandReader = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.commands`, topics: [topics.sendCommands], fromBeginning: true });
    await commandReader.run(async (batch) => {
      for (const r of batch.records) if (r.decoded.ok && r.decoded.value) commands.set((r.decoded.value as SendCommand).message_id, r.decoded.value as SendCommand);
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
  });

  afterAll(async () => {
    await commandReader?.stop();
    await api?.stop();
    await instances?.stop();
    await clients?.close();
    await env?.dispose();
  });

  describe('authentication and reach', () => {
    it('answers 401 unauthorized without a key, with an unknown key, and with a revoked one', async () => {
      const none = await api.app.inject({ method: 'GET', url: '/instances' });
      expect(none.statusCode).toBe(401);
      expect(none.json()).toMatchObject({ code: 'unauthorized' });
      const unknown = await api.app.inject({ method: 'GET', url: '/instances', headers: auth('svc_live_doesnotexist') });
      expect(unknown.statusCode).toBe(401);

      const created = await post('/keys', { role: 'agent', scopes: ['instances:read'] });
      expect(created.statusCode).toBe(201);
      const { id, api_key } = created.json<{ id: string; api_key: string }>();
      expect((await api.app.inject({ method: 'GET', url: '/instances', headers: auth(api_key) })).statusCode).toBe(200);
      expect((await api.app.inject({ method: 'DELETE', url: `/keys/${id}`, headers: auth() })).statusCode).toBe(200);
      expect((await api.app.inject({ method: 'GET', url: '/instances', headers: auth(api_key) })).statusCode).toBe(401);
    });

    it('answers 403 forbidden for a route outside the key scopes', async () => {
      const { api_key } = (await post('/keys', { role: 'agent', scopes: ['instances:read'] })).json<{ api_key: string }>();
      const response = await api.app.inject({ method: 'POST', url: '/messages/text', payload: { to: '+5511988887777', body: 'hi' }, headers: auth(api_key) });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({ code: 'forbidden' });
    });

    it('answers 404 for a number of another project', async () => {
      const other = await createAccount(clients.producer, { name: 'Other', email: 'x@other.test' }, async () => undefined);
      const theirs = await number('connected', other.project_id, other.account_id);
      const response = await post('/messages/text', { to: '+5511988887777', body: 'hi', instance_id: theirs });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 'not_found' });
    });

    it("refuses a number past the plan's limit with 402 quota_exceeded", async () => {
      const free = await createAccount(clients.producer, { name: 'Solo', email: 'solo@x.test' }, async () => undefined);
      await api.directory.until(() => canSignIn(api.directory, free.account_id));
      const add = () => api.app.inject({ method: 'POST', url: '/instances', payload: { nickname: 'one' }, headers: auth(free.api_key) });
      expect((await add()).statusCode).toBe(202);
      await waitFor('the first number', async () => {
        const listed = await api.app.inject({ method: 'GET', url: '/instances', headers: auth(free.api_key) });
        return listed.json<{ data: unknown[] }>().data.length === 1;
      });
      const second = await add();
      expect(second.statusCode).toBe(402);
      expect(second.json()).toMatchObject({ code: 'quota_exceeded' });
    });

    it('keeps a rotated key working for the grace period, next to the new one', async () => {
      const { id, api_key: old } = (await post('/keys', { role: 'agent', scopes: ['instances:read'] })).json<{ id: string; api_key: string }>();
      const rotated = await post(`/keys/${id}/rotate`, {});
      expect(rotated.statusCode).toBe(201);
      const body = rotated.json<{ api_key: string; rotated_from: { expires_at: string } }>();
      expect(new Date(body.rotated_from.expires_at).getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
      for (const key of [old, body.api_key]) {
        expect((await api.app.inject({ method: 'GET', url: '/instances', headers: auth(key) })).statusCode).toBe(200);
      }
    });
  });

  describe('rate limit', () => {
    it('gives 429 rate_limited with Retry-After: 1 and no X-RateLimit headers once the bucket of 40 is empty', async () => {
      const { api_key } = (await post('/keys', { role: 'agent', scopes: ['instances:read'] })).json<{ api_key: string }>();
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 60 }, () => api.app.inject({ method: 'GET', url: '/instances', headers: auth(api_key) })),
      );
      const seconds = (performance.now() - started) / 1000;
      const limited = answers.filter((a) => a.statusCode === 429);
      // The burst of 40, plus what refilled at 20/s while the requests ran (a loaded machine runs them slower).
      expect(answers.filter((a) => a.statusCode === 200).length).toBeGreaterThanOrEqual(40);
      expect(answers.filter((a) => a.statusCode === 200).length).toBeLessThanOrEqual(40 + Math.ceil(20 * seconds) + 1);
      expect(limited.length).toBeGreaterThan(0);
      expect(limited[0]!.headers['retry-after']).toBe('1');
      expect(limited[0]!.json()).toMatchObject({ code: 'rate_limited' });
      expect(Object.keys(limited[0]!.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
    });

    it('gives a burst of concurrent requests exactly the tokens the bucket holds, first come first served', async () => {
      const take = createRateLimiter(clients.pool);
      const limit = { rate: 0.001, burst: 10 };
      const bucket = `key:burst-${Date.now()}`;
      const first = await Promise.all(Array.from({ length: 25 }, () => take(bucket, limit)));
      expect(first).toEqual(Array.from({ length: 25 }, (_, i) => i < 10));
      expect(await Promise.all(Array.from({ length: 5 }, () => take(bucket, limit)))).toEqual([false, false, false, false, false]);
    });

    it('answers a steady stream of requests from leased tokens, without a statement each', async () => {
      let statements = 0;
      const counted = { query: (...args: Parameters<Pool['query']>) => ((statements += 1), clients.pool.query(...args)) } as unknown as Pool;
      const take = createRateLimiter(counted);
      const bucket = `key:steady-${Date.now()}`;
      const given: boolean[] = [];
      for (let i = 0; i < 500; i++) given.push(await take(bucket, { rate: 1_000, burst: 2_000 }));
      expect(given.every(Boolean)).toBe(true);
      // A tenth of a second of the rate (100 tokens) is leased at a time, ahead of the requests.
      expect(statements).toBeLessThanOrEqual(15);
    });

    it('never gives more than the shared bucket holds, and drops leased tokens after LEASE_MS', async () => {
      let at = Date.now();
      const clock = () => at;
      const [first, second] = [createRateLimiter(clients.pool, clock), createRateLimiter(clients.pool, clock)];
      const limit = { rate: 0.001, burst: 10 };
      const bucket = `key:shared-${Date.now()}`;
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? first : second)(bucket, limit)));
      expect(answers.filter(Boolean).length).toBe(10);

      // The first process leases a token ahead of its next request; the second finds the bucket empty.
      const other = `key:dropped-${Date.now()}`;
      const small = { rate: 0.001, burst: 2 };
      expect(await first(other, small)).toBe(true);
      expect(await second(other, small)).toBe(false);
      // The token the first holds is good for LEASE_MS, then dropped rather than given late.
      at += LEASE_MS;
      expect(await first(other, small)).toBe(false);
    });

    it('deletes the buckets nobody drew from for a day', async () => {
      const idle = `ip:idle-${Date.now()}`;
      const recent = `ip:recent-${Date.now()}`;
      await clients.pool.query(
        `INSERT INTO api.rate_buckets (bucket, tokens, refreshed_at) VALUES ($1, 1, now() - interval '25 hours'), ($2, 1, now() - interval '23 hours')`,
        [idle, recent],
      );
      await createRateLimiter(clients.pool)(`key:purging-${Date.now()}`, { rate: 10, burst: 10 });
      const left = async () => (await clients.pool.query<{ bucket: string }>('SELECT bucket FROM api.rate_buckets WHERE bucket = ANY($1)', [[idle, recent]])).rows.map((r) => r.bucket);
      await waitFor('the idle bucket to be deleted', async () => !(await left()).includes(idle));
      expect(await left()).toEqual([recent]);
    });

    it('shares one bucket between API processes', async () => {
      const second = await startApi(clients, { listen: false });
      try {
        const { id, api_key } = (await post('/keys', { role: 'agent', scopes: ['instances:read'] })).json<{ id: string; api_key: string }>();
        await second.directory.until(() => second.directory.key(id) !== undefined);
        const started = performance.now();
        const answers = await Promise.all(
          Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? api : second).app.inject({ method: 'GET', url: '/instances', headers: auth(api_key) })),
        );
        const seconds = (performance.now() - started) / 1000;
        const ok = answers.filter((a) => a.statusCode === 200).length;
        // One bucket lets through its burst of 40 plus what refilled at 20/s while the requests ran;
        // two buckets would let through 80 plus twice that refill, whatever the machine's speed.
        expect(ok).toBeGreaterThanOrEqual(40);
        expect(ok).toBeLessThanOrEqual(40 + Math.ceil(20 * seconds) + 1);
      } finally {
        await second.stop();
      }
    });
  });

  describe('number choice', () => {
    it('refuses a forced number that is not connected, and a project with no sending number', async () => {
      const down = await number('disconnected');
      const forced = await post('/messages/text', { to: '+5511988887777', body: 'hi', instance_id: down });
      expect(forced.statusCode).toBe(409);
      expect(forced.json()).toMatchObject({ code: 'not_connected' });
      const any = await post('/messages/text', { to: '+5511988887777', body: 'hi' });
      expect(any.statusCode).toBe(409);
      expect(any.json()).toMatchObject({ code: 'no_number_available' });
    });

    it('spreads new conversations across connected numbers and narrows to a pool', async () => {
      const a = await number('connected');
      const b = await number('connected');
      const used = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const response = await post('/messages/text', { to: `+55119${String(10_000_000 + i)}`, body: 'hello' });
        expect(response.statusCode, response.body).toBe(202);
        used.add((await command(response.json<{ message_id: string }>().message_id)).instance_id);
      }
      expect(used).toEqual(new Set([a, b]));

      const created = await post('/pools', { name: 'only-b', instance_ids: [b] });
      expect(created.statusCode).toBe(201);
      const poolId = created.json<{ id: string }>().id;
      for (let i = 0; i < 3; i++) {
        const response = await post('/messages/text', { to: `+55119${String(20_000_000 + i)}`, body: 'hi', pool_id: poolId });
        expect((await command(response.json<{ message_id: string }>().message_id)).instance_id).toBe(b);
      }
    });
  });

  describe('idempotency', () => {
    it('answers the same message_id with Idempotent-Replayed: true and writes one command', async () => {
      await number('connected');
      const body = { to: '+5511977776666', body: 'once', client_reference: 'order-1' };
      const first = await post('/messages/text', body, { 'idempotency-key': 'order-1-confirmation' });
      expect(first.statusCode, first.body).toBe(202);
      const again = await post('/messages/text', body, { 'idempotency-key': 'order-1-confirmation' });
      expect(again.statusCode).toBe(202);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      const id = first.json<{ message_id: string }>().message_id;
      await command(id);
      expect([...commands.values()].filter((c) => c.message_id === id)).toHaveLength(1);
    });

    it('gives 422 for the same key with another body and 400 for a key over 255 characters', async () => {
      await post('/messages/text', { to: '+5511977776666', body: 'a' }, { 'idempotency-key': 'k-reused' });
      const reused = await post('/messages/text', { to: '+5511977776666', body: 'b' }, { 'idempotency-key': 'k-reused' });
      expect(reused.statusCode).toBe(422);
      expect(reused.json()).toMatchObject({ code: 'idempotency_key_reused' });
      const long = await post('/messages/text', { to: '+5511977776666', body: 'a' }, { 'idempotency-key': 'x'.repeat(256) });
      expect(long.statusCode).toBe(400);
      expect(long.json()).toMatchObject({ code: 'idempotency_key_invalid' });
    });

    it('lets concurrent identical requests through once: the others get 409 or the replay', async () => {
      const body = { to: '+5511966665555', body: 'race' };
      const answers = await Promise.all(Array.from({ length: 8 }, () => post('/messages/text', body, { 'idempotency-key': 'k-race' })));
      const accepted = answers.filter((a) => a.statusCode === 202);
      const busy = answers.filter((a) => a.statusCode === 409);
      expect(accepted.length + busy.length).toBe(8);
      expect(new Set(accepted.map((a) => a.json<{ message_id: string }>().message_id)).size).toBe(1);
      expect(accepted.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      for (const b of busy) expect(b.json()).toMatchObject({ code: 'idempotency_in_progress' });
    });

    it('makes a key used again after its 24 hours a new send, with a message id of its own', async () => {
      const body = { to: '+5511955550001', body: 'every day' };
      const first = await post('/messages/text', body, { 'idempotency-key': 'k-daily' });
      expect(first.statusCode, first.body).toBe(202);
      const firstId = first.json<{ message_id: string }>().message_id;
      await command(firstId);
      await clients.pool.query(`UPDATE api.idempotency_keys SET created_at = now() - interval '25 hours' WHERE account_id = $1 AND key = 'k-daily'`, [account.account_id]);
      const next = await post('/messages/text', body, { 'idempotency-key': 'k-daily' });
      expect(next.statusCode, next.body).toBe(202);
      expect(next.headers['idempotent-replayed']).toBeUndefined();
      const nextId = next.json<{ message_id: string }>().message_id;
      // The old id would be taken by the connector for the send it already made: answered 202, never sent.
      expect(nextId).not.toBe(firstId);
      expect((await command(nextId)).content).toEqual({ kind: 'text', body: 'every day' });
    });

    it('keeps the message id when a request left in progress by a crashed process is taken over', async () => {
      const body = { to: '+5511955550002', body: 'once only' };
      const first = await post('/messages/text', body, { 'idempotency-key': 'k-crashed' });
      const firstId = first.json<{ message_id: string }>().message_id;
      // As a process leaves it that wrote the command and died before recording the answer.
      await clients.pool.query(
        `UPDATE api.idempotency_keys SET state = 'in_progress', status_code = NULL, response = NULL, created_at = now() - interval '2 minutes' WHERE account_id = $1 AND key = 'k-crashed'`,
        [account.account_id],
      );
      const retried = await post('/messages/text', body, { 'idempotency-key': 'k-crashed' });
      expect(retried.statusCode, retried.body).toBe(202);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
      expect(retried.json<{ message_id: string }>().message_id).toBe(firstId);
    });

    it('gives a key released after a failed answer (a 503 whose command the log took late) the same message id again', async () => {
      const keys = new IdempotencyKeys(clients.pool);
      const first = await keys.claim(account.account_id, 'k-after-503', 'hash-1');
      await keys.release(account.account_id, 'k-after-503');
      const retry = await keys.claim(account.account_id, 'k-after-503', 'hash-2');
      expect(first.kind).toBe('claimed');
      expect(retry).toEqual(first);
    });

    it('deletes the keys past their 24 hours, and keeps the others', async () => {
      await clients.pool.query(
        `INSERT INTO api.idempotency_keys (account_id, key, request_hash, state, created_at) VALUES ($1, 'k-old', 'h', 'done', now() - interval '25 hours'), ($1, 'k-young', 'h', 'done', now() - interval '23 hours')`,
        [account.account_id],
      );
      await new IdempotencyKeys(clients.pool).claim(account.account_id, 'k-purging', 'h');
      const left = async () =>
        (await clients.pool.query<{ key: string }>(`SELECT key FROM api.idempotency_keys WHERE account_id = $1 AND key IN ('k-old', 'k-young')`, [account.account_id])).rows.map((r) => r.key);
      await waitFor('the old key to be deleted', async () => !(await left()).includes('k-old'));
      expect(await left()).toEqual(['k-young']);
    });

    it('releases the key when the first answer was not 2xx', async () => {
      const bad = await post('/messages/text', { to: '+5511955554444', body: 'x', instance_id: 'inst_missing' }, { 'idempotency-key': 'k-release' });
      expect(bad.statusCode).toBe(404);
      const good = await post('/messages/text', { to: '+5511955554444', body: 'x' }, { 'idempotency-key': 'k-release' });
      expect(good.statusCode).toBe(202);
      expect(good.headers['idempotent-replayed']).toBeUndefined();
    });
  });

  describe('every send type', () => {
    const cases: Array<[string, Record<string, unknown>, (c: SendCommand['content']) => void]> = [
      ['text', { body: 'Olá' }, (c) => expect(c).toEqual({ kind: 'text', body: 'Olá' })],
      ['location', { latitude: -23.5, longitude: -46.6, name: 'Sé' }, (c) => expect(c).toMatchObject({ kind: 'location', latitude: -23.5, name: 'Sé', address: null })],
      ['contact', { contact_name: 'Ana', contact_phone: '+5511944443333' }, (c) => expect(c).toMatchObject({ kind: 'contact', contact_vcard: expect.stringContaining('TEL;type=CELL;waid=5511944443333') as unknown })],
      ['reaction', { quoted_message_id: 'WA123', emoji: '👍' }, (c) => expect(c).toEqual({ kind: 'reaction', quoted_message_id: 'WA123', emoji: '👍' })],
      ['poll', { name: 'Lunch?', options: ['Yes', 'No'], selectable_count: 1 }, (c) => expect(c).toMatchObject({ kind: 'poll', options: ['Yes', 'No'] })],
      ['buttons', { body: 'Pick', buttons: [{ id: 'a', title: 'A' }, { id: 'b', title: 'B' }] }, (c) => expect(c).toMatchObject({ kind: 'buttons' })],
      ['list', { body: 'Menu', sections: [{ title: 'Food', rows: [{ id: 'p', title: 'Pizza' }] }] }, (c) => expect(c).toMatchObject({ kind: 'list', sections: [{ title: 'Food', rows: [{ id: 'p', title: 'Pizza', description: null }] }] })],
    ];

    it.each(cases)('%s: 202 queued and a command with the content', async (type, fields, check) => {
      await number('connected');
      const response = await post(`/messages/${type}`, { to: '+5511933332222', client_reference: `ref-${type}`, ...fields });
      expect(response.statusCode, response.body).toBe(202);
      const body = response.json<{ message_id: string; status: string; client_reference: string }>();
      expect(body).toMatchObject({ status: 'queued', client_reference: `ref-${type}` });
      const sent = await command(body.message_id);
      expect(sent.to).toBe('5511933332222@s.whatsapp.net');
      check(sent.content);
    });

    it('otp: the code is sealed and masked on the log, never in clear', async () => {
      await number('connected');
      const response = await post('/messages/otp', { to: '+5511922221111', code: '482913', expiry_minutes: 10 });
      expect(response.statusCode, response.body).toBe(202);
      const sent = await command(response.json<{ message_id: string }>().message_id);
      expect(sent.content).toMatchObject({ kind: 'otp', code_masked: '••••13', expiry_minutes: 10 });
      expect(JSON.stringify(sent)).not.toContain('482913');
      // Under a key of its own, not the gateway's cipher: destroying the key shreds the code.
      const sealed = (sent.content as { code_ciphertext: string }).code_ciphertext;
      expect(() => api.cipher.open(sealed)).toThrow();
      expect(await new OtpKeys(clients.pool).open(sealed)).toBe('482913');
      expect((sent.content as { body: string }).body).toMatch(/10 minutes/);
    });

    it('answers 400 invalid_request for bad input and writes nothing', async () => {
      const before = commands.size;
      for (const [type, body] of [
        ['text', { to: '5511', body: 'x' }],
        ['text', { to: '+5511933332222' }],
        ['location', { to: '+5511933332222', latitude: 91, longitude: 0 }],
        ['poll', { to: '+5511933332222', name: 'x', options: ['only'] }],
        ['otp', { to: '+5511933332222', code: '12' }],
      ] as const) {
        const response = await post(`/messages/${type}`, body);
        expect(response.statusCode, `${type} ${JSON.stringify(body)}`).toBe(400);
        expect(response.json()).toMatchObject({ code: 'invalid_request' });
      }
      expect(commands.size).toBe(before);
    });
  });

  describe('phones as people write them', () => {
    it('refuses a phone its country does not give out with 400 invalid_request naming why, and writes nothing', async () => {
      await number('connected');
      const before = commands.size;
      for (const [to, problem] of [
        ['+1 555 000 1111', 'invalid_for_region'],
        ['+15550001111', 'invalid_for_region'],
        ['+999 1234 5678', 'invalid_country_code'],
        ['+55 11 9000', 'too_short'],
        ['(11) 99999-8888', 'missing_country'],
      ] as const) {
        const response = await post('/messages/text', { to, body: 'x' }, { 'idempotency-key': `bad-${to}` });
        expect(response.statusCode, to).toBe(400);
        expect(response.json(), to).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(`body/to: ${problem}`) as unknown });
      }
      const unknownCountry = await post('/messages/text', { to: '(11) 99999-8888', body: 'x', country: 'XX' });
      expect(unknownCountry.statusCode).toBe(400);
      expect(unknownCountry.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('body/country') as unknown });
      expect(commands.size).toBe(before);
      // A refused key is released (spec 8.2, 5): the same key with a good phone sends.
      expect((await post('/messages/text', { to: '+5511944440001', body: 'x' }, { 'idempotency-key': 'bad-+15550001111' })).statusCode).toBe(202);
    });

    it("sends to a national phone read in the request's country, else the account's, as its E.164 jid; jids go as they are", async () => {
      await number('connected');
      const sent = async (body: Record<string, unknown>, key = account.api_key) => {
        const response = await post('/messages/text', { body: 'hi', ...body }, auth(key));
        expect(response.statusCode, response.body).toBe(202);
        return (await command(response.json<{ message_id: string }>().message_id)).to;
      };
      expect(await sent({ to: '+55 (11) 94444-0002' })).toBe('5511944440002@s.whatsapp.net');
      expect(await sent({ to: '(11) 94444-0003', country: 'BR' })).toBe('5511944440003@s.whatsapp.net');
      expect(await sent({ to: '07400 123456', country: 'gb' })).toBe('447400123456@s.whatsapp.net');
      expect(await sent({ to: '98765432101234@lid' })).toBe('98765432101234@lid');
      // The old jid shapes stay as they were: no numbering plan is asked about a jid the network gave.
      expect(await sent({ to: '15550001111@s.whatsapp.net' })).toBe('15550001111@s.whatsapp.net');

      const brazil = await createAccount(clients.producer, { name: 'Padaria', email: 'ops@padaria.test', country: 'BR' }, async () => undefined);
      await api.directory.until(() => canSignIn(api.directory, brazil.account_id) && api.directory.accounts.get(brazil.account_id)?.country === 'BR');
      await number('connected', brazil.project_id, brazil.account_id);
      expect(await sent({ to: '(11) 94444-0004' }, brazil.api_key)).toBe('5511944440004@s.whatsapp.net');
      expect(await sent({ to: '015112345678', country: 'DE' }, brazil.api_key)).toBe('4915112345678@s.whatsapp.net');
    });
  });
});
