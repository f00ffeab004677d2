import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { publishAdvisory } from '../../processors/events/advisories.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { contactId } from '../../schemas/contact-ids.js';
import { endOffsets, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

interface Answer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

/**
 * The audience routes of the account-wide contact base (spec 4.3 and 5: /tags, /suppressions,
 * /blocklist, /contact-groups) over HTTP on the real stack, with the processor applying what
 * the routes write to the log. Each account sees only its own.
 */
describe('audience routes', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let shop: CreatedAccount;
  let other: CreatedAccount;

  async function call<T = Record<string, unknown>>(method: string, path: string, options: { auth?: string; body?: unknown } = {}): Promise<Answer<T>> {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: {
        ...(options.auth === undefined ? {} : { authorization: `Bearer ${options.auth}` }),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text === '' ? {} : JSON.parse(text)) as T };
  }
  const as = (account: CreatedAccount) => (method: string, path: string, body?: unknown) => call(method, path, { auth: account.api_key, body });
  /** Polls a GET until its body equals `expected`. */
  const until = (account: CreatedAccount, path: string, expected: unknown) =>
    waitFor(`${path} to read ${JSON.stringify(expected)}`, async () => {
      const answer = await as(account)('GET', path);
      return JSON.stringify(answer.body) === JSON.stringify(expected) ? answer : undefined;
    }, { timeoutMs: 20_000 });

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', SWEEP_INTERVAL_MS: '3600000' });
    clients = await testClients(env);
    roles = await startRoles(['processor', 'connector'], clients);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const connect = connectSandboxNumbers(clients.producer);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'shop@audience.test', plan: 'pro', sandboxNumbers: 1 }, connect);
    other = await createAccount(clients.producer, { name: 'Other', email: 'other@audience.test', plan: 'pro', sandboxNumbers: 0 }, connect);
    await api.directory.until(() => [shop, other].every((a) => canSignIn(api.directory, a.account_id)), 15_000);
    await waitFor('the shop number connected', async () => {
      const listed = await as(shop)('GET', '/instances');
      return (listed.body.data as { status: string }[] | undefined)?.[0]?.status === 'connected';
    }, { timeoutMs: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  describe('/tags', () => {
    it('lists the tags with their contact counts, renames (merging) and deletes them across contacts', async () => {
      const imported = await as(shop)('POST', '/contacts/import', {
        rows: [
          { phone: '+5511900000001', tags: ['vip', 'lead'] },
          { phone: '+5511900000002', tags: ['vip'] },
          { phone: '+5511900000003', tags: ['lead'] },
        ],
      });
      expect(imported).toMatchObject({ status: 200, body: { created: 3 } });
      await until(shop, '/tags', { data: [{ name: 'lead', contacts: 2 }, { name: 'vip', contacts: 2 }] });
      expect(await as(other)('GET', '/tags')).toEqual({ status: 200, body: { data: [] } });
      expect(await as(shop)('PATCH', '/tags/lead', { name: 'lead' })).toEqual({ status: 200, body: { name: 'lead', contacts: 2 } });
      expect(await as(other)('PATCH', '/tags/lead', { name: 'x' })).toMatchObject({ status: 404, body: { code: 'not_found' } });

      expect(await as(shop)('PATCH', '/tags/vip', { name: ' gold ' })).toEqual({ status: 200, body: { name: 'gold', contacts: 2 } });
      await until(shop, '/tags', { data: [{ name: 'gold', contacts: 2 }, { name: 'lead', contacts: 2 }] });
      const tagged = await as(shop)('GET', '/contacts?tag=gold');
      expect((tagged.body.data as { phone: string; tags: string[] }[]).map((c) => [c.phone, c.tags]).sort()).toEqual([['+5511900000001', ['gold', 'lead']], ['+5511900000002', ['gold']]]);

      // Renaming onto a tag in use merges: the contact carrying both keeps one.
      expect(await as(shop)('PATCH', '/tags/lead', { name: 'gold' })).toEqual({ status: 200, body: { name: 'gold', contacts: 2 } });
      await until(shop, '/tags', { data: [{ name: 'gold', contacts: 3 }] });

      expect(await as(shop)('DELETE', '/tags/gold')).toEqual({ status: 204, body: {} });
      await until(shop, '/tags', { data: [] });
    });

    it('answers 404 for a tag no contact carries, 400 for a bad name, 401 without a key', async () => {
      expect(await as(shop)('PATCH', '/tags/nobody', { name: 'x' })).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await as(shop)('DELETE', '/tags/nobody')).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await as(shop)('PATCH', '/tags/vip', { name: '' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(await as(shop)('PATCH', '/tags/vip', { name: '   ' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(await as(shop)('PATCH', '/tags/vip', { name: 'x', color: 'red' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(await as(shop)('PATCH', `/tags/${'x'.repeat(65)}`, { name: 'y' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(await call('GET', '/tags')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    });
  });

  describe('/suppressions and /blocklist', () => {
    const sends = async () => [...(await endOffsets(clients.kafka, topicName(topics.sendCommands, clients.serdes.prefix))).values()].reduce((a, b) => a + b, 0);
    const text = (to: string) => as(shop)('POST', '/messages/text', { to, body: 'hello' });
    const otp = (to: string) => as(shop)('POST', '/messages/otp', { to, code: '123456' });

    it('refuses every send but a deletion to a blocklisted phone, writing nothing, until it is removed', async () => {
      const phone = '+5511900001001';
      expect(await text(phone)).toMatchObject({ status: 202 });
      const added = await as(shop)('POST', '/blocklist', { phone: '+55 (11) 90000-1001', reason: 'abuse' });
      expect(added).toMatchObject({ status: 201, body: { phone, reason: 'abuse' } });
      expect(await as(shop)('POST', '/blocklist', { phone, reason: 'abuse' })).toEqual({ status: 200, body: added.body });
      expect(await as(shop)('GET', '/blocklist')).toEqual({ status: 200, body: { data: [added.body], next_cursor: null } });
      expect(await as(shop)('GET', `/blocklist/${phone}`)).toEqual({ status: 200, body: added.body });
      expect(await as(shop)('GET', `/blocklist/${encodeURIComponent(phone)}`)).toEqual({ status: 200, body: added.body });
      expect(await as(other)('GET', '/blocklist')).toEqual({ status: 200, body: { data: [], next_cursor: null } });
      expect(await as(other)('GET', `/blocklist/${phone}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await as(shop)('GET', `/suppressions/${phone}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });

      const before = await sends();
      expect(await text(phone)).toMatchObject({ status: 422, body: { code: 'contact_opted_out' } });
      expect(await otp(phone)).toMatchObject({ status: 422, body: { code: 'contact_opted_out' } });
      expect(await sends()).toBe(before);
      // A deletion takes back what the phone received before it was listed.
      expect(await as(shop)('POST', '/messages/delete', { to: phone, quoted_message_id: 'WA_EARLIER' })).toMatchObject({ status: 202 });

      expect(await as(shop)('DELETE', `/blocklist/${phone}`)).toEqual({ status: 204, body: {} });
      expect(await as(shop)('GET', `/blocklist/${phone}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await text(phone)).toMatchObject({ status: 202 });
    });

    it('refuses sends but OTPs to a suppressed phone, and pages the list newest first', async () => {
      const phones = ['+5511900002001', '+5511900002002', '+5511900002003'];
      for (const phone of phones) expect(await as(shop)('POST', '/suppressions', { phone })).toMatchObject({ status: 201, body: { phone, reason: null } });
      // Listing again with a reason replaces the reason and keeps the time it was first listed.
      const first = await as(shop)('GET', `/suppressions/${phones[0]}`);
      expect(await as(shop)('POST', '/suppressions', { phone: phones[0], reason: 'bounced' })).toEqual({ status: 200, body: { ...first.body, reason: 'bounced' } });

      const before = await sends();
      expect(await text(phones[1]!)).toMatchObject({ status: 422, body: { code: 'contact_opted_out' } });
      expect(await sends()).toBe(before);
      expect(await otp(phones[1]!)).toMatchObject({ status: 202 });

      const page1 = await as(shop)('GET', '/suppressions?limit=2');
      expect(page1.status).toBe(200);
      const page2 = await as(shop)('GET', `/suppressions?limit=2&cursor=${page1.body.next_cursor as string}`);
      expect(page2.body.next_cursor).toBeNull();
      const listed = [...(page1.body.data as { phone: string }[]), ...(page2.body.data as { phone: string }[])].map((entry) => entry.phone);
      expect(listed.sort()).toEqual(phones);
      expect(await as(other)('GET', '/suppressions')).toEqual({ status: 200, body: { data: [], next_cursor: null } });
    });

    it('answers 400 for a bad phone or body, 404 for a phone not listed, 401 without a key', async () => {
      for (const list of ['suppressions', 'blocklist']) {
        expect(await as(shop)('POST', `/${list}`, { phone: 'not a phone' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('POST', `/${list}`, {})).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('POST', `/${list}`, { phone: '+5511900003001', color: 'red' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('POST', `/${list}`, { phone: '+5511900003001', reason: 'x'.repeat(201) })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('GET', `/${list}?limit=0`)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('GET', `/${list}?cursor=nonsense`)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('GET', `/${list}/abc`)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('GET', `/${list}/+5511900003999`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
        expect(await as(shop)('DELETE', `/${list}/+5511900003999`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
        expect(await call('GET', `/${list}`)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
      }
    });
  });

  describe('/contact-groups', () => {
    const phones = ['+5511900004001', '+5511900004002', '+5511900004003'];
    let ids: string[];

    beforeAll(async () => {
      expect(await as(shop)('POST', '/contacts/import', { rows: phones.map((phone, i) => ({ phone, name: `Member ${i}` })) })).toMatchObject({ status: 200 });
      ids = phones.map((phone) => contactId(shop.account_id, phone));
      await waitFor('the members imported', async () => ((await as(shop)('GET', '/contacts?q=%2B55119000040')).body.data as unknown[]).length === 3, { timeoutMs: 20_000 });
    });

    it('creates, reads, renames and deletes a group; adds, lists by page and removes its contacts', async () => {
      const created = await as(shop)('POST', '/contact-groups', { name: ' VIP ' });
      expect(created).toMatchObject({ status: 201, body: { name: 'VIP', members: 0 } });
      const id = created.body.id as string;
      expect(id).toMatch(/^grp_/);
      expect(await as(shop)('GET', `/contact-groups/${id}`)).toEqual({ status: 200, body: created.body });

      expect(await as(shop)('POST', `/contact-groups/${id}/members`, { contact_ids: ids })).toMatchObject({ status: 200, body: { id, members: 3 } });
      expect(await as(shop)('POST', `/contact-groups/${id}/members`, { contact_ids: [ids[0], ids[0]] })).toMatchObject({ status: 200, body: { members: 3 } });
      const page1 = await as(shop)('GET', `/contact-groups/${id}/members?limit=2`);
      expect(page1).toMatchObject({ status: 200 });
      const page2 = await as(shop)('GET', `/contact-groups/${id}/members?limit=2&cursor=${page1.body.next_cursor as string}`);
      expect(page2.body.next_cursor).toBeNull();
      const members = [...(page1.body.data as { id: string; phone: string }[]), ...(page2.body.data as { id: string; phone: string }[])];
      expect(members.map((m) => [m.id, m.phone]).sort()).toEqual(ids.map((contact, i) => [contact, phones[i]]).sort());

      expect(await as(shop)('DELETE', `/contact-groups/${id}/members/${ids[1]}`)).toEqual({ status: 204, body: {} });
      expect(await as(shop)('DELETE', `/contact-groups/${id}/members/${ids[1]}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await as(shop)('GET', `/contact-groups/${id}`)).toMatchObject({ status: 200, body: { members: 2 } });

      const renamed = await as(shop)('PATCH', `/contact-groups/${id}`, { name: 'Gold' });
      expect(renamed).toMatchObject({ status: 200, body: { id, name: 'Gold', members: 2, created_at: created.body.created_at } });
      const listed = await as(shop)('GET', '/contact-groups');
      expect(listed).toMatchObject({ status: 200, body: { next_cursor: null } });
      expect(listed.body.data).toContainEqual(renamed.body);

      expect(await as(other)('GET', '/contact-groups')).toEqual({ status: 200, body: { data: [], next_cursor: null } });
      expect(await as(other)('GET', `/contact-groups/${id}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await as(other)('POST', `/contact-groups/${id}/members`, { contact_ids: [ids[1]] })).toMatchObject({ status: 404, body: { code: 'not_found' } });

      expect(await as(shop)('DELETE', `/contact-groups/${id}`)).toEqual({ status: 204, body: {} });
      expect(await as(shop)('GET', `/contact-groups/${id}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await as(shop)('GET', `/contact-groups/${id}/members`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
      // The contacts stay.
      expect(((await as(shop)('GET', '/contacts?q=%2B55119000040')).body.data as unknown[]).length).toBe(3);
    });

    it('answers 400 for a bad name or body, 404 for an unknown group or contact (adding nothing), 401 without a key', async () => {
      const group = await as(shop)('POST', '/contact-groups', { name: 'Errors' });
      const id = group.body.id as string;
      for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 'ok', color: 'red' }]) {
        expect(await as(shop)('POST', '/contact-groups', body), JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
        expect(await as(shop)('PATCH', `/contact-groups/${id}`, body), JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      }
      expect(await as(shop)('POST', `/contact-groups/${id}/members`, { contact_ids: [] })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(await as(shop)('POST', `/contact-groups/${id}/members`, { contact_ids: [ids[0], 'ct_nobody'] })).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await as(shop)('GET', `/contact-groups/${id}`)).toMatchObject({ status: 200, body: { members: 0 } });
      expect(await as(shop)('GET', '/contact-groups?limit=201')).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(await as(shop)('GET', `/contact-groups/${id}/members?cursor=nonsense`)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      for (const [method, path] of [['GET', '/contact-groups/grp_nobody'], ['PATCH', '/contact-groups/grp_nobody'], ['DELETE', '/contact-groups/grp_nobody'], ['GET', '/contact-groups/grp_nobody/members'], ['POST', '/contact-groups/grp_nobody/members'], ['DELETE', `/contact-groups/grp_nobody/members/${ids[0]}`], ['DELETE', `/contact-groups/${id}/members/${ids[0]}`]] as const) {
        const body = method === 'PATCH' ? { name: 'x' } : method === 'POST' ? { contact_ids: [ids[0]] } : undefined;
        expect(await as(shop)(method, path, body), `${method} ${path}`).toMatchObject({ status: 404, body: { code: 'not_found' } });
      }
      expect(await call('GET', '/contact-groups')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
      expect(await call('POST', '/contact-groups', { body: { name: 'x' } })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    });
  });

  describe('/advisories', () => {
    it('lists the advisories published to the account, newest first, and only to it', async () => {
      expect(await as(shop)('GET', '/advisories')).toEqual({ status: 200, body: { data: [] } });
      const input = { title: 'TLS 1.0 ends', impact: 'Clients on TLS 1.0 fail', action: 'Upgrade your HTTP client', link: 'https://example.test/advisories/tls' };
      const first = await publishAdvisory(clients, { ...input, accounts: [shop.account_id, other.account_id] }, Date.UTC(2026, 0, 1));
      const second = await publishAdvisory(clients, { ...input, title: 'Webhook IPs change', accounts: [shop.account_id] }, Date.UTC(2026, 1, 1));
      const listed = await until(shop, '/advisories', {
        data: [
          { advisory_id: second.advisory_id, ...input, title: 'Webhook IPs change', published_at: '2026-02-01T00:00:00.000Z' },
          { advisory_id: first.advisory_id, ...input, published_at: '2026-01-01T00:00:00.000Z' },
        ],
      });
      expect(listed.status).toBe(200);
      expect(await as(other)('GET', '/advisories')).toEqual({ status: 200, body: { data: [{ advisory_id: first.advisory_id, ...input, published_at: '2026-01-01T00:00:00.000Z' }] } });
      expect(await call('GET', '/advisories')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    });
  });

  it('documents every audience route in the OpenAPI document, with its response shapes', async () => {
    const doc = await call<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>('GET', '/openapi.json');
    const operations = Object.entries(doc.body.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    const expected = [
      'GET /tags', 'PATCH /tags/{name}', 'DELETE /tags/{name}',
      ...['suppressions', 'blocklist'].flatMap((list) => [`POST /${list}`, `GET /${list}`, `GET /${list}/{phone}`, `DELETE /${list}/{phone}`]),
      'POST /contact-groups', 'GET /contact-groups', 'GET /contact-groups/{id}', 'PATCH /contact-groups/{id}', 'DELETE /contact-groups/{id}',
      'GET /contact-groups/{id}/members', 'POST /contact-groups/{id}/members', 'DELETE /contact-groups/{id}/members/{contact_id}',
      'GET /advisories',
    ];
    expect(operations).toEqual(expect.arrayContaining(expected));
    for (const operation of expected) {
      const [method, path] = operation.split(' ') as [string, string];
      expect(Object.keys(doc.body.paths[path]![method.toLowerCase()]!.responses), operation).toEqual(expect.arrayContaining([expect.stringMatching(/^20[014]$/)]));
    }
  });
});
