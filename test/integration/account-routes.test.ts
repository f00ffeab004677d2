import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { asAccountId, asEventId, asProjectId, newId } from '../../schemas/ids.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { endOffsets, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

interface Answer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

const GB = 1_000_000_000;
/** A 1x1 PNG, 70 bytes. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/**
 * The account routes of spec 4.3 and 5 that need no network (`/me/plan`, `/me/addons`) over HTTP
 * on the real stack, with the usage processor counting stored media: the stored-media allowance
 * (spec 8.3) refuses a send over it, and an add-on raises it.
 */
describe('account routes', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let shop: CreatedAccount;
  let free: CreatedAccount;
  let agentKey: string;

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
  const as = (key: string) => (method: string, path: string, body?: unknown) => call(method, path, { auth: key, body });
  const configWrites = async () => [...(await endOffsets(clients.kafka, topicName(topics.config, clients.serdes.prefix))).values()].reduce((a, b) => a + b, 0);
  const sendImage = (key: string) => as(key)('POST', '/messages/image', { to: '+5511999990001', media: { base64: PIXEL, mimetype: 'image/png' } });

  /** Stored media counted for the account as the media store counts it: a `media_stored` record on `gw.usage`. */
  async function storedMedia(account: CreatedAccount, bytes: number): Promise<void> {
    const before = ((await as(account.api_key)('GET', '/me/entitlements')).body.usage as { media_storage_bytes: number }).media_storage_bytes;
    const mediaId = newId('med');
    await clients.producer.send(topics.usage, [{
      key: account.account_id,
      value: {
        event_id: asEventId(`media_stored:${mediaId}`), occurred_at: Date.now(), account_id: asAccountId(account.account_id), project_id: asProjectId(account.project_id), instance_id: null,
        kind: 'media_stored', quantity: bytes, message_id: null, media_id: mediaId, allowance: null, percent: null, used: null, included: null, plan: null,
      },
    }]);
    await waitFor('the stored media counted', async () => {
      const usage = (await as(account.api_key)('GET', '/me/entitlements')).body.usage as { media_storage_bytes: number };
      return usage.media_storage_bytes >= before + bytes ? true : undefined;
    }, { timeoutMs: 30_000 });
  }

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', SWEEP_INTERVAL_MS: '3600000' });
    clients = await testClients(env);
    roles = await startRoles(['processor', 'connector'], clients);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const connect = connectSandboxNumbers(clients.producer);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'shop@account.test', plan: 'pro', country: 'BR', sandboxNumbers: 1 }, connect);
    free = await createAccount(clients.producer, { name: 'Free', email: 'free@account.test', plan: 'free', sandboxNumbers: 0 }, connect);
    await api.directory.until(() => [shop, free].every((a) => canSignIn(api.directory, a.account_id)), 15_000);
    const agent = await as(shop.api_key)('POST', '/keys', { role: 'agent' });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    agentKey = agent.body.api_key as string;
    await waitFor('the shop number connected', async () => {
      const listed = await as(shop.api_key)('GET', '/instances');
      return (listed.body.data as { status: string }[] | undefined)?.[0]?.status === 'connected';
    }, { timeoutMs: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('shows the plan, its limits with the add-ons counted, and the plans to compare', async () => {
    const plan = await as(shop.api_key)('GET', '/me/plan');
    expect(plan).toMatchObject({
      status: 200,
      body: { plan: 'pro', limits: { numbers: 10, media_storage_bytes: GB, media_storage_per_addon_bytes: GB }, media_storage_allowance_bytes: GB },
    });
    expect((plan.body.plans as { plan: string; current: boolean }[]).map((p) => [p.plan, p.current])).toEqual([['free', false], ['pro', true], ['scale', false]]);
    // Any key of the account reads it; no key is 401.
    expect(await as(agentKey)('GET', '/me/plan')).toMatchObject({ status: 200, body: { plan: 'pro' } });
    expect(await call('GET', '/me/plan')).toMatchObject({ status: 401 });
    expect(await as(free.api_key)('GET', '/me/plan')).toMatchObject({ status: 200, body: { plan: 'free', media_storage_allowance_bytes: 100_000_000 } });
  });

  it('documents the account routes in the OpenAPI', async () => {
    const doc = await call<{ paths: Record<string, Record<string, unknown>> }>('GET', '/openapi.json');
    const documented = Object.entries(doc.body.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(documented).toEqual(
      expect.arrayContaining([
        'GET /me/plan', 'GET /me/addons', 'POST /me/addons', 'DELETE /me/addons/{addon}',
        'GET /billing', 'PUT /billing', 'GET /me/invoices', 'GET /me/invoices/{id}',
        'GET /brand', 'PUT /brand', 'GET /official', 'POST /official', 'GET /me/widgets', 'PUT /me/widgets',
      ]),
    );
  });

  it('refuses what the add-on routes cannot take, writing nothing', async () => {
    const writes = await configWrites();
    const refusals: [string, string, string, unknown, number, string][] = [
      [shop.api_key, 'POST', '/me/addons', { addon: 'numbers' }, 400, 'invalid_request'],
      [shop.api_key, 'POST', '/me/addons', { addon: 'media_storage', quantity: 0 }, 400, 'invalid_request'],
      [shop.api_key, 'POST', '/me/addons', { addon: 'media_storage', quantity: 101 }, 400, 'invalid_request'],
      [shop.api_key, 'DELETE', '/me/addons/media_storage', undefined, 404, 'not_found'],
      [shop.api_key, 'DELETE', '/me/addons/numbers', undefined, 404, 'not_found'],
      [agentKey, 'POST', '/me/addons', { addon: 'media_storage' }, 403, 'forbidden'],
      [agentKey, 'DELETE', '/me/addons/media_storage', undefined, 403, 'forbidden'],
      // Free takes no add-ons: Pro is paid first.
      [free.api_key, 'POST', '/me/addons', { addon: 'media_storage' }, 402, 'payment_required'],
    ];
    for (const [key, method, path, body, status, code] of refusals) {
      expect(await as(key)(method, path, body), `${method} ${path} ${JSON.stringify(body)}`).toMatchObject({ status, body: { code } });
    }
    expect(await call('POST', '/me/addons', { body: { addon: 'media_storage' } })).toMatchObject({ status: 401 });
    expect(await configWrites()).toBe(writes);
    expect(await as(free.api_key)('GET', '/me/addons')).toMatchObject({
      status: 200,
      body: { data: [{ addon: 'media_storage', quantity: 0, available: false, unit_price: { currency: 'EUR', amount: 400 } }], media_storage_allowance_bytes: 100_000_000 },
    });
  });

  it('refuses media over the stored-media allowance with media_too_large, and an add-on raises the allowance', async () => {
    // The account's storage is full but for 10 bytes: the 70-byte image does not fit.
    const used = ((await as(shop.api_key)('GET', '/me/entitlements')).body.usage as { media_storage_bytes: number }).media_storage_bytes;
    await storedMedia(shop, GB - 10 - used);
    const sends = async () => [...(await endOffsets(clients.kafka, topicName(topics.sendCommands, clients.serdes.prefix))).values()].reduce((a, b) => a + b, 0);
    const sent = await sends();
    expect(await sendImage(shop.api_key)).toMatchObject({ status: 413, body: { code: 'media_too_large' } });
    expect(await sends()).toBe(sent);

    const added = await as(shop.api_key)('POST', '/me/addons', { addon: 'media_storage' });
    expect(added).toMatchObject({
      status: 201,
      body: { data: [{ addon: 'media_storage', quantity: 1, max: 100, available: true, unit_price: { currency: 'BRL', amount: 1990 } }], media_storage_allowance_bytes: 2 * GB },
    });
    expect(await as(agentKey)('GET', '/me/addons')).toEqual({ status: 200, body: added.body });
    expect(await as(shop.api_key)('GET', '/me/plan')).toMatchObject({ body: { media_storage_allowance_bytes: 2 * GB } });
    expect(await sendImage(shop.api_key)).toMatchObject({ status: 202 });

    // Two more at once count two: the changes of one account run alone.
    const both = await Promise.all([1, 1].map((quantity) => as(shop.api_key)('POST', '/me/addons', { addon: 'media_storage', quantity })));
    expect(both.map((a) => a.status)).toEqual([201, 201]);
    expect(await as(shop.api_key)('GET', '/me/addons')).toMatchObject({ body: { data: [{ quantity: 3 }], media_storage_allowance_bytes: 4 * GB } });

    // Removing them brings the allowance back, and the full storage refuses again.
    for (const left of [2, 1, 0]) {
      expect(await as(shop.api_key)('DELETE', '/me/addons/media_storage')).toMatchObject({ status: 200, body: { data: [{ quantity: left }] } });
    }
    await storedMedia(shop, 10);
    expect(await sendImage(shop.api_key)).toMatchObject({ status: 413, body: { code: 'media_too_large' } });
  });

  it('keeps the billing details admins write, refusing bad ones and agents, writing nothing then', async () => {
    const none = { legal_name: null, tax_id: null, email: null, address: { line1: null, line2: null, city: null, state: null, postal_code: null, country: null } };
    expect(await as(shop.api_key)('GET', '/billing')).toEqual({ status: 200, body: none });
    const writes = await configWrites();
    const refusals: [string, string, unknown, number, string][] = [
      [shop.api_key, 'PUT', { email: 'not-an-email' }, 400, 'invalid_request'],
      [shop.api_key, 'PUT', { address: { country: 'Brazil' } }, 400, 'invalid_request'],
      [shop.api_key, 'PUT', { legal_name: 'x'.repeat(201) }, 400, 'invalid_request'],
      [shop.api_key, 'PUT', { vat: 'x' }, 400, 'invalid_request'],
      [agentKey, 'PUT', { legal_name: 'Shop Ltda' }, 403, 'forbidden'],
      [agentKey, 'GET', undefined, 403, 'forbidden'],
    ];
    for (const [key, method, body, status, code] of refusals) {
      expect(await as(key)(method, '/billing', body), `${method} /billing ${JSON.stringify(body)}`).toMatchObject({ status, body: { code } });
    }
    expect(await call('GET', '/billing')).toMatchObject({ status: 401 });
    expect(await configWrites()).toBe(writes);

    const details = { legal_name: 'Shop Ltda', tax_id: '12.345.678/0001-90', email: 'billing@shop.test', address: { line1: 'Rua A, 1', city: 'São Paulo', postal_code: '01000-000', country: 'BR' } };
    const stored = { ...details, address: { ...none.address, ...details.address } };
    expect(await as(shop.api_key)('PUT', '/billing', details)).toEqual({ status: 200, body: stored });
    expect(await as(shop.api_key)('GET', '/billing')).toEqual({ status: 200, body: stored });
    // A PUT replaces them all.
    expect(await as(shop.api_key)('PUT', '/billing', { legal_name: 'Shop SA' })).toEqual({ status: 200, body: { ...none, legal_name: 'Shop SA' } });
    expect(await as(shop.api_key)('PUT', '/billing', details)).toMatchObject({ status: 200 });
  });

  it('lists an invoice per payment made, newest first, billed to the billing details', async () => {
    const attemptId = newId('pay');
    const paidAt = Date.now();
    const payment = (status: 'paid' | 'failed', at: number, periodEnd: number | null) => ({
      key: shop.account_id,
      value: {
        event_id: asEventId(newId('pmt')), occurred_at: at, account_id: asAccountId(shop.account_id), project_id: null, instance_id: null, connection_id: null,
        attempt_id: attemptId, provider: 'sandbox', method: 'card' as const, status, plan: 'pro', currency: 'BRL', amount: 14_900, period_end: periodEnd,
        reason: null, pay_url: null, email: null, locale: 'en',
      },
    });
    const first = payment('paid', paidAt, paidAt + 30 * 86_400_000);
    const failed = payment('failed', paidAt + 1_000, null);
    const renewal = payment('paid', paidAt + 2_000, paidAt + 60 * 86_400_000);
    await clients.producer.send(topics.payments, [first, failed, renewal]);
    const listed = await waitFor('two invoices', async () => {
      const answer = await as(shop.api_key)('GET', '/me/invoices');
      return (answer.body.data as unknown[] | undefined)?.length === 2 ? answer : undefined;
    }, { timeoutMs: 30_000 });
    const billTo = { legal_name: 'Shop Ltda', tax_id: '12.345.678/0001-90', email: 'billing@shop.test' };
    expect(listed.body.data).toMatchObject([
      { id: renewal.value.event_id, number: 'INV-0002', status: 'paid', description: 'Pro plan, monthly', currency: 'BRL', total: 14_900,
        period_end: new Date(paidAt + 60 * 86_400_000).toISOString(), paid_at: new Date(paidAt + 2_000).toISOString(),
        payment: { attempt_id: attemptId, provider: 'sandbox', method: 'card' }, bill_to: billTo },
      { id: first.value.event_id, number: 'INV-0001', paid_at: new Date(paidAt).toISOString(), bill_to: billTo },
    ]);
    expect(await as(shop.api_key)('GET', `/me/invoices/${first.value.event_id}`)).toEqual({ status: 200, body: (listed.body.data as unknown[])[1] });
    expect(await as(shop.api_key)('GET', `/me/invoices/${failed.value.event_id}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    // Another account's invoice is not found; an agent key reads none.
    expect(await as(free.api_key)('GET', `/me/invoices/${first.value.event_id}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await as(free.api_key)('GET', '/me/invoices')).toEqual({ status: 200, body: { data: [] } });
    expect(await as(agentKey)('GET', '/me/invoices')).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await call('GET', '/me/invoices')).toMatchObject({ status: 401 });
  });

  it('keeps the brand admins write, refusing bad ones and agents, writing nothing then', async () => {
    const none = { name: null, logo_url: null, primary_color: null, accent_color: null };
    expect(await as(agentKey)('GET', '/brand')).toEqual({ status: 200, body: none });
    const writes = await configWrites();
    const refusals: [string, unknown, number, string][] = [
      [shop.api_key, { primary_color: 'blue' }, 400, 'invalid_request'],
      [shop.api_key, { logo_url: 'http://shop.test/logo.png' }, 400, 'invalid_request'],
      [shop.api_key, { name: '' }, 400, 'invalid_request'],
      [shop.api_key, { font: 'Arial' }, 400, 'invalid_request'],
      [agentKey, { name: 'Shop' }, 403, 'forbidden'],
    ];
    for (const [key, body, status, code] of refusals) {
      expect(await as(key)('PUT', '/brand', body), `PUT /brand ${JSON.stringify(body)}`).toMatchObject({ status, body: { code } });
    }
    expect(await call('PUT', '/brand', { body: { name: 'Shop' } })).toMatchObject({ status: 401 });
    expect(await configWrites()).toBe(writes);
    const brand = { name: 'Shop', logo_url: 'https://shop.test/logo.png', primary_color: '#0A7CFF', accent_color: '#ff8800' };
    expect(await as(shop.api_key)('PUT', '/brand', brand)).toEqual({ status: 200, body: brand });
    expect(await as(agentKey)('GET', '/brand')).toEqual({ status: 200, body: brand });
    expect(await as(shop.api_key)('PUT', '/brand', { name: 'Shop 2' })).toEqual({ status: 200, body: { ...none, name: 'Shop 2' } });
    expect(await as(free.api_key)('GET', '/brand')).toEqual({ status: 200, body: none });
  });

  it('takes a request to be an official sender from admins of a paid plan', async () => {
    expect(await as(shop.api_key)('GET', '/official')).toEqual({ status: 200, body: { status: 'none', business_name: null, website: null, description: null, requested_at: null } });
    const writes = await configWrites();
    const refusals: [string, unknown, number, string][] = [
      [shop.api_key, { business_name: 'Shop Ltda' }, 400, 'invalid_request'],
      [shop.api_key, { business_name: 'Shop Ltda', website: 'shop.test' }, 400, 'invalid_request'],
      [shop.api_key, { business_name: '', website: 'https://shop.test' }, 400, 'invalid_request'],
      [agentKey, { business_name: 'Shop Ltda', website: 'https://shop.test' }, 403, 'forbidden'],
      [free.api_key, { business_name: 'Free Ltda', website: 'https://free.test' }, 402, 'payment_required'],
    ];
    for (const [key, body, status, code] of refusals) {
      expect(await as(key)('POST', '/official', body), `POST /official ${JSON.stringify(body)}`).toMatchObject({ status, body: { code } });
    }
    expect(await configWrites()).toBe(writes);
    const requested = await as(shop.api_key)('POST', '/official', { business_name: 'Shop Ltda', website: 'https://shop.test', description: 'Shoes' });
    expect(requested).toMatchObject({ status: 202, body: { status: 'pending', business_name: 'Shop Ltda', website: 'https://shop.test', description: 'Shoes' } });
    expect(Date.parse(requested.body.requested_at as string)).toBeGreaterThan(Date.now() - 60_000);
    expect(await as(agentKey)('GET', '/official')).toEqual({ status: 200, body: requested.body });
    // A new request replaces the pending one.
    expect(await as(shop.api_key)('POST', '/official', { business_name: 'Shop SA', website: 'https://shop.test' })).toMatchObject({
      status: 202,
      body: { status: 'pending', business_name: 'Shop SA', description: null },
    });
  });

  it('keeps the click-to-chat widget admins set on a number of the project', async () => {
    const off = { chat_button: { enabled: false, instance_id: null, greeting: null, position: 'right', color: null } };
    expect(await as(agentKey)('GET', '/me/widgets')).toEqual({ status: 200, body: off });
    const writes = await configWrites();
    const number = shop.instance_ids[0]!;
    const refusals: [string, unknown, number, string][] = [
      [shop.api_key, { chat_button: { enabled: true } }, 400, 'invalid_request'],
      [shop.api_key, { chat_button: { position: 'top' } }, 400, 'invalid_request'],
      [shop.api_key, { chat_button: { color: 'red' } }, 400, 'invalid_request'],
      [shop.api_key, { chat_button: {}, banner: {} }, 400, 'invalid_request'],
      [shop.api_key, { chat_button: { enabled: true, instance_id: 'inst_nope' } }, 404, 'not_found'],
      // A number of another account is not found either.
      [free.api_key, { chat_button: { enabled: true, instance_id: number } }, 404, 'not_found'],
      [agentKey, { chat_button: { enabled: true, instance_id: number } }, 403, 'forbidden'],
    ];
    for (const [key, body, status, code] of refusals) {
      expect(await as(key)('PUT', '/me/widgets', body), `PUT /me/widgets ${JSON.stringify(body)}`).toMatchObject({ status, body: { code } });
    }
    expect(await configWrites()).toBe(writes);
    const on = { chat_button: { enabled: true, instance_id: number, greeting: 'Hi! I have a question', position: 'left', color: '#25D366' } };
    expect(await as(shop.api_key)('PUT', '/me/widgets', on)).toEqual({ status: 200, body: on });
    expect(await as(agentKey)('GET', '/me/widgets')).toEqual({ status: 200, body: on });
    expect(await as(shop.api_key)('PUT', '/me/widgets', { chat_button: {} })).toEqual({ status: 200, body: off });
  });
});
