import type { AddressInfo } from 'node:net';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

type Body = Record<string, unknown>;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0'), Buffer.alloc(64), Buffer.from([0xff, 0xd9])]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(32)]);
const svg = (inner: string, attrs = '') => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10"${attrs}>${inner}</svg>`);

/** Platform administration (spec 2.7, 4.7) over HTTP: partners, their secrets, deactivation and logos. */
describe('platform administration', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let base: string;
  let admin: string;
  let account: CreatedAccount;

  async function call(method: string, path: string, options: { auth?: string; body?: unknown; form?: FormData } = {}): Promise<{ status: number; body: Body; headers: Record<string, unknown>; raw: Buffer }> {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: {
        ...(options.auth === undefined ? {} : { authorization: `Bearer ${options.auth}` }),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    const raw = Buffer.from(await response.body.arrayBuffer());
    let body: Body = {};
    try {
      body = JSON.parse(raw.toString('utf8')) as Body;
    } catch {
      // not JSON (a logo)
    }
    return { status: response.statusCode, body, headers: response.headers, raw };
  }
  const platform = (method: string, path: string, body?: unknown) => call(method, path, { auth: admin, body });
  const upload = (id: string, bytes: Buffer, filename: string, field = 'file') => {
    const form = new FormData();
    form.append(field, new Blob([bytes]), filename);
    return call('POST', `/platform/partners/${id}/logo`, { auth: admin, form });
  };
  const newPartner = (slug: string, extra: Body = {}) =>
    platform('POST', '/platform/partners', { name: `Partner ${slug}`, slug, allowed_origins: ['https://App.Example.com/'], webhook_url: 'https://hooks.example.com/gw', key_scopes: ['messages:send'], ...extra });

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1' });
    clients = await testClients(env);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const created = await createPlatformAdmin(clients.producer, 'Ops@Gateway.test');
    admin = created.credential;
    account = await createAccount(clients.producer, { name: 'Shop', email: 'owner@shop.test' }, async () => undefined);
    await api.directory.until(() => api.directory.platformAdmins.has(created.id) && canSignIn(api.directory, account.account_id), 15_000);
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('takes only a platform credential: none or a wrong one 401, a customer key 403', async () => {
    expect(await call('GET', '/platform/partners')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await call('GET', '/platform/partners', { auth: 'svc_platform_wrong' })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await call('GET', '/platform/partners', { auth: account.api_key })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await platform('GET', '/platform/partners')).toMatchObject({ status: 200 });
  });

  it('registers a partner with its secrets shown once and only their hash and ciphertext on the log', async () => {
    const created = await newPartner('acme');
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ slug: 'acme', allowed_origins: ['https://app.example.com'], key_scopes: ['messages:send'], active: true, logo_url: null });
    const secret = created.body.partner_secret as string;
    const webhookSecret = created.body.webhook_secret as string;
    expect(secret).toMatch(/^svc_partner_/);
    expect((await platform('GET', `/platform/partners/${created.body.id as string}`)).body).not.toHaveProperty('partner_secret');
    expect(await call('GET', '/partner/me', { auth: secret })).toMatchObject({ status: 200, body: { id: created.body.id } });

    const seen: string[] = [];
    const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.platform.read`, topics: [topics.config], fromBeginning: true });
    await consumer.run(async (batch) => {
      for (const record of batch.records) seen.push(JSON.stringify(record.decoded.ok ? record.decoded.value : null));
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    try {
      await waitFor('the partner on gw.config', async () => (seen.some((v) => v.includes(created.body.id as string)) ? true : undefined), { timeoutMs: 15_000 });
      expect(seen.join('\n')).not.toContain(secret);
      expect(seen.join('\n')).not.toContain(webhookSecret);
      expect(seen.join('\n')).not.toContain(admin);
    } finally {
      await consumer.stop();
    }
  });

  it('refuses bad registrations', async () => {
    await newPartner('taken');
    const cases: [Body, RegExp][] = [
      [{ slug: 'Bad Slug' }, /slug/],
      [{ slug: 'taken' }, /taken/],
      [{ slug: 'origin-path', allowed_origins: ['https://app.example.com/path'] }, /allowed_origins/],
      [{ slug: 'origin-scheme', allowed_origins: ['ftp://app.example.com'] }, /allowed_origins/],
      [{ slug: 'bad-scope', key_scopes: ['keys:write'] }, /key_scopes/],
      [{ slug: 'bad-url', webhook_url: 'not a url' }, /webhook_url/],
    ];
    for (const [body, detail] of cases) {
      const answer = await newPartner(String(body.slug), body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.message).toMatch(detail);
    }
  });

  it('flags a webhook URL on a private or loopback host, and lists a partner webhook\'s deliveries', async () => {
    const created = await newPartner('flagged', { webhook_url: 'https://hooks.example.com/in' });
    const id = created.body.id as string;
    expect(created.body.webhook_url_warning).toBeNull();
    const changed = await platform('PATCH', `/platform/partners/${id}`, { webhook_url: 'http://10.0.0.7/in' });
    expect(changed).toMatchObject({ status: 200, body: { webhook_url: 'http://10.0.0.7/in', webhook_url_warning: 'private_address' } });

    expect(await platform('GET', `/platform/partners/${id}/deliveries`)).toMatchObject({ status: 200, body: { data: [], next_cursor: null } });
    expect(await platform('GET', `/platform/partners/${id}/deliveries?status=lost`)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await platform('GET', '/platform/partners/ptn_nobody/deliveries')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await platform('POST', `/platform/partners/${id}/deliveries/dlv_nothing/redeliver`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('GET', `/platform/partners/${id}/deliveries`, { auth: account.api_key })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it('rotates the partner secret and the webhook secret, the old ones ending at once; deactivates and reactivates', async () => {
    const created = await newPartner('rotating');
    const id = created.body.id as string;
    const first = created.body.partner_secret as string;
    const rotated = await platform('POST', `/platform/partners/${id}/rotate-secret`);
    const second = rotated.body.partner_secret as string;
    expect(second).toMatch(/^svc_partner_/);
    expect(await call('GET', '/partner/me', { auth: first })).toMatchObject({ status: 401, body: { code: 'partner_unauthorized' } });
    expect(await call('GET', '/partner/me', { auth: second })).toMatchObject({ status: 200 });
    const webhook = await platform('POST', `/platform/partners/${id}/rotate-webhook-secret`);
    expect(webhook.body.webhook_secret).not.toBe(created.body.webhook_secret);
    expect(api.cipher.open(api.directory.partners.get(id)!.webhook_secret_ciphertext!)).toBe(webhook.body.webhook_secret);

    expect(await platform('POST', `/platform/partners/${id}/deactivate`)).toMatchObject({ status: 200, body: { active: false } });
    expect(await call('GET', '/partner/me', { auth: second })).toMatchObject({ status: 403, body: { code: 'partner_inactive' } });
    expect(await platform('POST', `/platform/partners/${id}/activate`)).toMatchObject({ status: 200, body: { active: true } });
    expect(await call('GET', '/partner/me', { auth: second })).toMatchObject({ status: 200 });
    expect(await platform('PATCH', `/platform/partners/${id}`, { name: 'Renamed', allowed_origins: ['http://localhost:5173'] })).toMatchObject({
      status: 200,
      body: { name: 'Renamed', allowed_origins: ['http://localhost:5173'] },
    });
    expect(await platform('GET', '/platform/partners/ptn_missing')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await platform('GET', `/platform/partners/${id}/connections`)).toMatchObject({ status: 200, body: { data: [] } });
  });

  it('takes a logo by its bytes, refuses what is not an image or can run, and serves it under a CSP that runs nothing', async () => {
    const id = (await newPartner('logos')).body.id as string;
    expect(await upload(id, PNG, 'logo.png')).toMatchObject({ status: 200, body: { logo_url: expect.stringContaining(`/partners/${id}/logo?v=`) as unknown } });
    const served = await call('GET', `/partners/${id}/logo`);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.raw.equals(PNG)).toBe(true);

    // The name says PNG, the bytes say JPEG: the bytes win.
    expect(await upload(id, JPEG, 'logo.png')).toMatchObject({ status: 200 });
    expect((await call('GET', `/partners/${id}/logo`)).headers['content-type']).toBe('image/jpeg');
    expect(await upload(id, WEBP, 'logo.webp')).toMatchObject({ status: 200 });
    expect((await call('GET', `/partners/${id}/logo`)).headers['content-type']).toBe('image/webp');

    const refused: [Buffer, string][] = [
      [Buffer.from('just text, named like a picture'), 'text.png'],
      [Buffer.from('%PDF-1.7\n'), 'doc.png'],
      [svg('<script>alert(1)</script>'), 'script.svg'],
      [svg('<rect width="1" height="1"/>', ' onload="alert(1)"'), 'onload.svg'],
      [svg('<image href="https://evil.example/x.png"/>'), 'external.svg'],
      [svg('<use xlink:href="https://evil.example/x.svg#a"/>'), 'xlink.svg'],
      [svg('<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'), 'foreign.svg'],
      [svg('<rect style="fill:url(https://evil.example/p)"/>'), 'style.svg'],
      [Buffer.from('<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>'), 'entity.svg'],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>'), 'broken.svg'],
    ];
    for (const [bytes, name] of refused) expect(await upload(id, bytes, name), name).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await upload(id, Buffer.concat([PNG, Buffer.alloc(2_000_001)]), 'big.png')).toMatchObject({ status: 413, body: { code: 'media_too_large' } });
    expect(await upload(id, PNG, 'logo.png', 'image')).toMatchObject({ status: 400, body: { code: 'invalid_request' } });

    const clean = svg('<defs><linearGradient id="g"/></defs><rect width="10" height="10" fill="url(#g)"/><use href="#g"/>');
    expect(await upload(id, clean, 'clean.svg')).toMatchObject({ status: 200 });
    const logo = await call('GET', `/partners/${id}/logo`);
    expect(logo.headers['content-type']).toBe('image/svg+xml');
    expect(logo.raw.equals(clean)).toBe(true);
    expect(await call('GET', '/partners/ptn_none/logo')).toMatchObject({ status: 404 });
  });

  it('believes no X-Forwarded-For by default: failed attempts from one socket share its bucket whatever address they claim', async () => {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 80 }, async (_, i) => {
        const response = await request(`${base}/platform/partners`, { headers: { authorization: 'Bearer svc_platform_wrong', 'x-forwarded-for': `198.51.100.${i}` } });
        await response.body.dump();
        return response.statusCode;
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // Eighty claimed addresses, one bucket of 40 refilled at 20/s while they ran (earlier tests may have drawn from it).
    expect(answers.every((status) => status === 401 || status === 429)).toBe(true);
    expect(answers).toContain(429);
    expect(answers.filter((status) => status === 401).length).toBeLessThanOrEqual(40 + Math.ceil(20 * seconds) + 1);
  });
});
