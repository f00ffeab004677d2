import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { createInstance } from '../../processors/instances/create.js';
import { newSigningSecret, verify } from '../../events/signature.js';
import { replayProjection } from '../../processors/index.js';
import { publishAdvisory } from '../../processors/events/advisories.js';
import { connectionsProjection } from '../../processors/connections/projection.js';
import { asEventId, asProjectId, newId, type ConnectionId, type PartnerId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { readMailbox } from '../support/mailbox.js';
import { partnerRecord } from '../support/partner-records.js';
import { Receiver } from '../support/webhook-receiver.js';
import { canSignIn } from '../support/sign-in.js';

interface Answer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

/**
 * The partner API (spec 4.4), the connection lifecycle (3.1) and partner-issued keys (5) over HTTP
 * on the real stack: every role runs in-process, the API on a clock the test moves. Connections
 * are linked and completed through /connect with codes read from the SMTP server, and projects
 * and accounts are deleted through the API, so every `revoked_by` is reached as a customer would.
 */
describe('partner API and connection lifecycle', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let now = Date.now();
  const receiver = new Receiver(() => 200);
  const secrets = { partner: secretToken('svc_partner_'), other: secretToken('svc_partner_'), webhook: newSigningSecret() };
  const partnerId = newId('ptn') as PartnerId;
  const otherId = newId('ptn') as PartnerId;
  let account: CreatedAccount;

  async function call<T = Record<string, unknown>>(method: string, path: string, options: { auth?: string; session?: string; body?: unknown } = {}): Promise<Answer<T>> {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: {
        ...(options.auth === undefined ? {} : { authorization: `Bearer ${options.auth}` }),
        ...(options.session === undefined ? {} : { 'x-connect-session': options.session, origin: 'https://app.example.com' }),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text === '' ? {} : JSON.parse(text)) as T };
  }
  const partner = (method: string, path: string, body?: unknown) => call(method, path, { auth: secrets.partner, body });
  const session = (externalId: string, customer: Record<string, unknown> = {}, secret = secrets.partner) =>
    call('POST', '/partner/connect-sessions', { auth: secret, body: { external_id: externalId, customer: { name: 'Ana', email: 'ana@shop.test', ...customer } } });

  async function writeConfig(...records: ConfigRecord[]): Promise<void> {
    await clients.producer.send(topics.config, records.map((value) => ({ key: value.entity_id, value })));
    await Promise.all(records.map((r) => api.directory.applied(r.entity_id, r.event_id, 15_000)));
  }
  const setPlan = (plan: string) => {
    const current = api.directory.accounts.get(account.account_id)!;
    return writeConfig({
      event_id: asEventId(newId('cfg')),
      occurred_at: Date.now(),
      account_id: current.id,
      project_id: null,
      instance_id: null,
      entity_id: current.id,
      entity: { kind: 'account', name: current.name, email: current.email, locale: current.locale, plan, country: current.country },
    });
  };
  const statusOf = (id: string) => api.connections.get(id)?.to_status;
  const untilStatus = (id: string, status: string) => waitFor(`connection ${id} ${status}`, async () => (statusOf(id) === status ? true : undefined), { timeoutMs: 20_000 });
  const eventsFor = (type: string, connectionId: string) =>
    receiver.of(partnerId).filter((r) => r.eventType === type && r.body.connection?.id === connectionId);

  const component = (token: string) => (method: string, path: string, body?: unknown) => call(method, path, { session: token, body });
  let admins = 0;

  /**
   * A connection linked to the shop's account over HTTP, as the component does it: a new admin of
   * the account (a code per e-mail and hour is limited), its e-mail on the session, the code read
   * from the SMTP server.
   */
  async function linkedConnection(externalId: string, secret = secrets.partner): Promise<{ id: ConnectionId; c: ReturnType<typeof component> }> {
    const email = await newAdmin();
    const opened = await session(externalId, { email }, secret);
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const c = component(opened.body.session_token as string);
    await linkByCode(c, email);
    return { id: (opened.body.connection as { id: ConnectionId }).id, c };
  }

  async function newAdmin(): Promise<string> {
    const email = `admin${++admins}-${env.id}@shop.test`;
    expect(await call('POST', '/users', { auth: account.api_key, body: { email, role: 'admin' } })).toMatchObject({ status: 201 });
    return email;
  }

  async function linkByCode(c: ReturnType<typeof component>, email: string): Promise<void> {
    const earlier = (await readMailbox(email)).length;
    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'verify_email' } });
    const mail = await waitFor(`the code for ${email}`, async () => (await readMailbox(email))[earlier], { timeoutMs: 20_000 });
    const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
    expect(await c('POST', '/connect/account/verify', { code })).toMatchObject({ status: 200, body: { status: 'pending_number' } });
  }

  /** A one-time code of the component's completion (the account's number is connected). */
  async function completionCode(c: ReturnType<typeof component>): Promise<string> {
    const completed = await c('POST', '/connect/complete');
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    return completed.body.code as string;
  }

  /** A connection taken through the component to `active`, and its key from the partner's exchange. */
  async function activeConnection(externalId: string, secret = secrets.partner): Promise<{ id: ConnectionId; key: string; c: ReturnType<typeof component> }> {
    const { id, c } = await linkedConnection(externalId, secret);
    const exchanged = await call('POST', '/partner/connect/exchange', { auth: secret, body: { code: await completionCode(c) } });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    return { id, key: exchanged.body.api_key as string, c };
  }

  /**
   * A shop of its own (Pro, one sandbox number paired) that its owner links to the partner through
   * the component, completed and exchanged: a connection to delete the shop's projects or the shop under.
   */
  async function shopWithConnection(tag: string): Promise<{ shop: CreatedAccount; email: string; id: ConnectionId; key: string }> {
    const email = `owner-${tag}-${env.id}@shop.test`;
    const shop = await createAccount(clients.producer, { name: `Shop ${tag}`, email, plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await api.directory.until(() => canSignIn(api.directory, shop.account_id), 15_000);
    const opened = await session(`cus-${tag}`, { email });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const c = component(opened.body.session_token as string);
    await linkByCode(c, email);
    const code = await waitFor(
      'the completion, once the number is paired',
      async () => {
        const completed = await c('POST', '/connect/complete');
        return completed.status === 200 ? (completed.body.code as string) : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const exchanged = await partner('POST', '/partner/connect/exchange', { code });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    return { shop, email, id: (opened.body.connection as { id: ConnectionId }).id, key: exchanged.body.api_key as string };
  }

  /** The payload of the connect.revoked the partner's webhook received for a connection. */
  const revokedPayload = async (id: string) => {
    const event = await waitFor(`connect.revoked of ${id}`, async () => eventsFor('connect.revoked', id)[0], { timeoutMs: 30_000 });
    expect(verify(secrets.webhook, event.raw, event.signature)).toBe(true);
    return (JSON.parse(event.raw.toString()) as { payload: unknown }).payload;
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', SWEEP_INTERVAL_MS: '3600000' });
    clients = await testClients(env);
    await receiver.start();
    roles = await startRoles(['processor', 'connector', 'dispatcher', 'sweeper'], clients);
    api = await startApi(clients, { listen: true, clock: () => now });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const cipher = createCipher(env.config.secretsKey);
    await writeConfig(
      partnerRecord(partnerId, {
        secret_hash: hashSecret(secrets.partner),
        webhook_url: `${receiver.base}/${partnerId}`,
        webhook_secret_ciphertext: cipher.seal(secrets.webhook),
        key_scopes: ['instances:read', 'messages:send'],
      }),
      partnerRecord(otherId, { secret_hash: hashSecret(secrets.other) }),
    );
    account = await createAccount(clients.producer, { name: 'Shop', email: 'ana@shop.test', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await api.directory.until(() => api.directory.accounts.has(account.account_id) && api.directory.projects.has(account.project_id), 15_000);
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await roles?.stop();
    await receiver.close().catch(() => undefined);
    await clients?.close();
    await env?.dispose();
  });

  it('refuses a partner secret that is missing, wrong, or sent in the query string', async () => {
    expect(await call('GET', '/partner/me')).toMatchObject({ status: 401, body: { code: 'partner_unauthorized' } });
    expect(await call('GET', '/partner/me', { auth: secretToken('svc_partner_') })).toMatchObject({ status: 401, body: { code: 'partner_unauthorized' } });
    expect(await call('GET', `/partner/me?secret=${secrets.partner}`)).toMatchObject({ status: 401, body: { code: 'partner_unauthorized' } });
    expect(await call('GET', `/partner/me?secret=${secrets.partner}`, { auth: secrets.partner })).toMatchObject({ status: 401 });
    expect(await call('GET', '/partner/me', { auth: account.api_key })).toMatchObject({ status: 401, body: { code: 'partner_unauthorized' } });
    const me = await partner('GET', '/partner/me');
    expect(me).toMatchObject({ status: 200, body: { id: partnerId, key_scopes: ['instances:read', 'messages:send'] } });
    expect(JSON.stringify(me.body)).not.toContain('hash');
  });

  it('validates a session request with the spec codes', async () => {
    const cases: [unknown, string][] = [
      [{ customer: { name: 'A', email: 'a@b.test' } }, 'external_id_required'],
      [{ external_id: '', customer: { name: 'A', email: 'a@b.test' } }, 'external_id_required'],
      [{ external_id: 'x'.repeat(201), customer: { name: 'A', email: 'a@b.test' } }, 'external_id_required'],
      [{ external_id: 'c1', customer: { name: 'A' } }, 'customer_email_required'],
      [{ external_id: 'c1', customer: { name: 'A', email: 'not-an-email' } }, 'customer_email_required'],
      [{ external_id: 'c1', customer: { email: 'a@b.test' } }, 'customer_name_required'],
      [{ external_id: 'c1', customer: { name: ' ', company: '', email: 'a@b.test' } }, 'customer_name_required'],
    ];
    for (const [body, code] of cases) expect(await partner('POST', '/partner/connect-sessions', body), JSON.stringify(body)).toMatchObject({ status: 400, body: { code } });
    expect(await partner('POST', '/partner/connect-sessions', { external_id: 'c1', customer: { name: 'A', email: 'a@b.test', phone: '5511' } })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });
    expect(await partner('POST', '/partner/connect-sessions', { external_id: 'c1', customer: { name: 'A', email: 'a@b.test', phone: '+1 555 000 1111' } })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', message: expect.stringContaining('body/customer/phone: invalid_for_region') as unknown },
    });
    expect(await partner('POST', '/partner/connect-sessions', { external_id: 'x'.repeat(200), customer: { company: 'Acme', email: 'a@b.test' } })).toMatchObject({ status: 201 });
    // A phone written in the customer's national format is kept in E.164.
    const national = await session('cus-national-phone', { name: 'Ana', email: 'ana@national.test', country: 'BR', phone: '(11) 98888-7777' });
    expect(national.status).toBe(201);
    const nationalId = (national.body.connection as { id: string }).id;
    expect((await partner('GET', `/partner/connections/${nationalId}`)).body).toMatchObject({ customer: { phone: '+5511988887777', country: 'BR' } });
  });

  it('reuses the connection of an external_id, updates its pre-fill until linked, then freezes it', async () => {
    const email = await newAdmin();
    const first = await session('cus-prefill', { name: 'Ana', country: 'br', locale: 'pt-br', email });
    expect(first.status).toBe(201);
    expect(first.body.session_token).toMatch(/^cs_/);
    expect(first.body).toMatchObject({ connection: { status: 'pending_account', external_id: 'cus-prefill' } });
    const id = (first.body.connection as { id: string }).id;
    expect(new Date(first.body.expires_at as string).getTime()).toBe(now + 30 * 60_000);
    const second = await session('cus-prefill', { name: 'Ana Souza', email });
    expect((second.body.connection as { id: string }).id).toBe(id);
    expect(second.body.session_token).not.toBe(first.body.session_token);
    expect((await partner('GET', `/partner/connections/${id}`)).body).toMatchObject({ customer: { name: 'Ana Souza' } });

    await linkByCode(component(second.body.session_token as string), email);
    await session('cus-prefill', { name: 'Someone Else', email });
    const linked = await partner('GET', `/partner/connections/${id}`);
    expect(linked.body).toMatchObject({ status: 'pending_number', account_id: account.account_id, project_id: account.project_id, customer: { name: 'Ana Souza' } });
    // Another partner never reaches it.
    expect(await call('GET', `/partner/connections/${id}`, { auth: secrets.other })).toMatchObject({ status: 404, body: { code: 'connection_not_found' } });
    expect(await partner('GET', '/partner/connections/not-a-connection')).toMatchObject({ status: 404, body: { code: 'connection_not_found' } });
    expect(await partner('POST', `/partner/connections/${id}/rotate-key`)).toMatchObject({ status: 409, body: { code: 'connection_not_active' } });
    const listed = await call<{ data: { id: string }[] }>('GET', '/partner/connections?external_id=cus-prefill', { auth: secrets.partner });
    expect(listed.body.data.map((c) => c.id)).toEqual([id]);
    expect((await call<{ data: unknown[] }>('GET', '/partner/connections?status=revoked', { auth: secrets.partner })).body.data).toEqual([]);
  });

  it('exchanges a code once, for its own partner, within 10 minutes; the key is an agent key of the project', async () => {
    expect(await partner('POST', '/partner/connect/exchange', {})).toMatchObject({ status: 400, body: { code: 'code_required' } });
    expect(await partner('POST', '/partner/connect/exchange', { code: 'cc_wrong' })).toMatchObject({ status: 400, body: { code: 'invalid_code' } });

    const { id, key, c } = await activeConnection('cus-exchange');
    expect(key).toMatch(/^svc_live_/);
    const theirs = await completionCode(c);
    expect(await call('POST', '/partner/connect/exchange', { auth: secrets.other, body: { code: theirs } })).toMatchObject({ status: 400, body: { code: 'invalid_code' } });
    const late = await completionCode(c);
    now += 10 * 60_000 + 1;
    expect(await partner('POST', '/partner/connect/exchange', { code: late })).toMatchObject({ status: 400, body: { code: 'invalid_code' } });
    const used = await completionCode(c);
    expect(await partner('POST', '/partner/connect/exchange', { code: used })).toMatchObject({ status: 200 });
    expect(await partner('POST', '/partner/connect/exchange', { code: used })).toMatchObject({ status: 400, body: { code: 'invalid_code' } });
    // The second exchange issued a new key and revoked the first at once.
    expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 401 });

    const rotated = await partner('POST', `/partner/connections/${id}/rotate-key`);
    expect(rotated).toMatchObject({ status: 200, body: { id, status: 'active', account_id: account.account_id, project_id: account.project_id } });
    const fresh = rotated.body.api_key as string;
    const instances = await call<{ data: { id: string }[] }>('GET', '/instances?project_id=all', { auth: fresh });
    expect(instances.status).toBe(200);
    expect(instances.body.data.map((i) => i.id)).toEqual(account.instance_ids);
    expect(api.directory.keyByHash(hashSecret(fresh))).toMatchObject({ role: 'agent', scopes: ['instances:read', 'messages:send'], project_id: account.project_id, connection_id: id });
    // Spec 5's reach, routes the gateway has and routes it lacks alike.
    const outside = ['/keys', '/me/connections', '/webhooks', '/stream', '/contacts', '/users', '/projects', '/account', '/me/plan', '/me/addons', '/me/invoices', '/billing', '/me/widgets', '/platform/partners', '/brand', '/official', '/tags', '/contact-groups', '/suppressions', '/blocklist', '/sandbox/instances/x/scan'];
    for (const path of outside) expect(await call(path.startsWith('/sandbox') ? 'POST' : 'GET', path, { auth: fresh }), path).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    for (const path of ['/me/subscription', '/me/entitlements', '/usage']) expect((await call('GET', path, { auth: fresh })).status, path).not.toBe(403);
    // The account-wide contact base, route by route, writes included: 403 before any validation.
    const contactBase: [string, string, unknown?][] = [
      ['GET', '/tags'], ['PATCH', '/tags/vip', { name: 'gold' }], ['DELETE', '/tags/vip'],
      ['GET', '/suppressions'], ['POST', '/suppressions', { phone: '+5511999990001' }], ['GET', '/suppressions/+5511999990001'], ['DELETE', '/suppressions/+5511999990001'],
      ['GET', '/blocklist'], ['POST', '/blocklist', { phone: '+5511999990001' }], ['GET', '/blocklist/+5511999990001'], ['DELETE', '/blocklist/+5511999990001'],
      ['GET', '/contact-groups'], ['POST', '/contact-groups', { name: 'VIP' }], ['GET', '/contact-groups/grp_x'], ['PATCH', '/contact-groups/grp_x', { name: 'x' }],
      ['DELETE', '/contact-groups/grp_x'], ['GET', '/contact-groups/grp_x/members'], ['POST', '/contact-groups/grp_x/members', { contact_ids: ['ct_x'] }],
      ['DELETE', '/contact-groups/grp_x/members/ct_x'],
      ['GET', '/contacts'], ['POST', '/contacts/import', { rows: [{ phone: '+5511999990001' }] }], ['POST', '/contacts/ct_x/optout'],
    ];
    for (const [method, path, body] of contactBase) {
      expect(await call(method, path, { auth: fresh, body }), `${method} ${path}`).toMatchObject({ status: 403, body: { code: 'forbidden' } });
      // The account's own key reaches each of them (an answer other than 403).
      expect((await call(method, path, { auth: account.api_key, body })).status, `${method} ${path} with the account key`).not.toBe(403);
    }
    // The account routes (spec 4.3 and 5), route by route, writes included: 403 before any validation.
    const accountRoutes: [string, string, unknown?][] = [
      ['GET', '/me/plan'], ['POST', '/me/plan', { plan: 'pro' }],
      ['GET', '/me/addons'], ['POST', '/me/addons', { addon: 'media_storage' }], ['DELETE', '/me/addons/media_storage'],
      ['GET', '/me/invoices'], ['GET', '/me/invoices/pay_x'],
      ['GET', '/billing'], ['PUT', '/billing', { legal_name: 'Shop Ltd', email: 'billing@shop.test' }],
      ['GET', '/me/widgets'], ['PUT', '/me/widgets', {}],
      ['GET', '/brand'], ['PUT', '/brand', { name: 'Shop' }],
      ['GET', '/official'], ['POST', '/official', { business_name: 'Shop', website: 'https://shop.test' }],
    ];
    for (const [method, path, body] of accountRoutes) {
      expect(await call(method, path, { auth: fresh, body }), `${method} ${path}`).toMatchObject({ status: 403, body: { code: 'forbidden' } });
      expect((await call(method, path, { auth: account.api_key, body })).status, `${method} ${path} with the account key`).not.toBe(403);
    }
    // What spec 5 names in the reach of a partner-issued key, answered as to the account's key.
    const advisory = await publishAdvisory(clients, { accounts: [account.account_id], title: 'TLS 1.0 ends', impact: 'Old clients fail', action: 'Upgrade', link: 'https://example.test/tls' });
    const advisories = await waitFor('the advisory listed', async () => {
      const listed = await call<{ data: { advisory_id: string }[] }>('GET', '/advisories', { auth: fresh });
      return listed.body.data?.some((a) => a.advisory_id === advisory.advisory_id) ? listed : undefined;
    }, { timeoutMs: 15_000 });
    expect(advisories.status).toBe(200);
    expect(await call('GET', '/advisories', { auth: account.api_key })).toEqual(advisories);
    expect(await call('GET', '/me', { auth: fresh })).toMatchObject({ status: 200, body: { account: { id: account.account_id }, connection: { id } } });
    // Campaigns are in the reach: the partner's key creates, reads, starts and lists one.
    const campaign = await call<{ id: string }>('POST', '/campaigns', { auth: fresh, body: { name: 'Reach', message: { type: 'text', body: 'Hi' }, audience: { list: [{ to: '+5511999990001' }] } } });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
    for (const [method, path] of [['GET', '/campaigns'], ['GET', `/campaigns/${campaign.body.id}`], ['GET', `/campaigns/${campaign.body.id}/recipients`], ['POST', `/campaigns/${campaign.body.id}/cancel`]] as const) {
      expect((await call(method, path, { auth: fresh })).status, `${method} ${path}`).toBe(200);
    }
    // A number of another project of the same customer is not found.
    const elsewhere = await createInstance(clients.producer, { accountId: account.account_id as never, projectId: asProjectId(newId('prj')), nickname: null, connector: 'sandbox' });
    expect(await call('POST', '/messages/text', { auth: fresh, body: { to: '+5511999990001', body: 'x', instance_id: elsewhere.instance_id } })).toMatchObject({ status: 404 });
  });

  it('keeps a partner-issued key the customer rotates bound to its connection: suspended and revoked with it', async () => {
    const { id, key } = await activeConnection('cus-customer-rotates');
    const keyId = api.directory.keyByHash(hashSecret(key))!.id;
    const rotated = await call('POST', `/keys/${keyId}/rotate`, { auth: account.api_key });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const fresh = rotated.body.api_key as string;
    expect(api.directory.keyByHash(hashSecret(fresh))).toMatchObject({ role: 'agent', connection_id: id });
    expect(await partner('DELETE', `/partner/connections/${id}`)).toMatchObject({ status: 204 });
    expect(await call('GET', '/instances', { auth: fresh })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });
  });

  it('sends connect.completed and then the operation events of the project to the partner webhook, signed, with the connection block', async () => {
    const { id, key } = await activeConnection('cus-events');
    const sent = await call('POST', '/messages/text', { auth: key, body: { to: '+5511999990001', body: 'hello from a partner key' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const completed = await waitFor('connect.completed', async () => eventsFor('connect.completed', id)[0], { timeoutMs: 30_000 });
    expect(completed.body.connection).toEqual({ id, external_id: 'cus-events', account_id: account.account_id, project_id: account.project_id, status: 'active' });
    expect(verify(secrets.webhook, completed.raw, completed.signature)).toBe(true);
    const message = await waitFor('message.sent to the partner', async () => eventsFor('message.sent', id)[0], { timeoutMs: 30_000 });
    expect(verify(secrets.webhook, message.raw, message.signature)).toBe(true);
    expect(message.at).toBeGreaterThanOrEqual(completed.at);
  });

  it('suspends at once on a plan downgrade (402 connect_suspended) and resumes on payment', async () => {
    const { id, key } = await activeConnection('cus-suspend');
    await setPlan('free');
    await untilStatus(id, 'suspended');
    expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 402, body: { code: 'connect_suspended' } });
    await waitFor('connect.suspended', async () => eventsFor('connect.suspended', id)[0], { timeoutMs: 30_000 });
    await setPlan('pro');
    await untilStatus(id, 'active');
    expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 200 });
    await waitFor('connect.resumed', async () => eventsFor('connect.resumed', id)[0], { timeoutMs: 30_000 });
  });

  it('applies a suspension on the very call of the key when the sweep has not run', async () => {
    const { id, key } = await activeConnection('cus-keycall');
    await roles.stop();
    try {
      await setPlan('free');
      expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 402, body: { code: 'connect_suspended' } });
      expect(statusOf(id)).toBe('suspended');
      await setPlan('pro');
      expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 200 });
      expect(statusOf(id)).toBe('active');
    } finally {
      roles = await startRoles(['processor', 'connector', 'dispatcher', 'sweeper'], clients);
    }
  });

  it('revokes by the partner and by the customer; the key answers 401 connect_revoked and /connect codes 409', async () => {
    const byPartner = await activeConnection('cus-revoke-partner');
    const unexchanged = await completionCode(byPartner.c);
    expect(await partner('DELETE', `/partner/connections/${byPartner.id}`)).toMatchObject({ status: 204 });
    expect(await call('GET', '/instances', { auth: byPartner.key })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });
    const revoked = await partner('GET', `/partner/connections/${byPartner.id}`);
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'partner' });
    expect(revoked.body).not.toHaveProperty('account_id');
    expect(await byPartner.c('POST', '/connect/complete')).toMatchObject({ status: 409, body: { code: 'connection_revoked' } });
    expect(await partner('POST', '/partner/connect/exchange', { code: unexchanged })).toMatchObject({ status: 409, body: { code: 'connection_revoked' } });
    expect(await partner('DELETE', `/partner/connections/${byPartner.id}`)).toMatchObject({ status: 204 });
    const event = await waitFor('connect.revoked', async () => eventsFor('connect.revoked', byPartner.id)[0], { timeoutMs: 30_000 });
    expect((JSON.parse(event.raw.toString()) as { payload: unknown }).payload).toEqual({ status: 'revoked', revoked_by: 'partner' });

    const byCustomer = await activeConnection('cus-revoke-customer');
    const mine = await call<{ data: Record<string, unknown>[] }>('GET', '/me/connections', { auth: account.api_key });
    const listed = mine.body.data.find((c) => c.id === byCustomer.id);
    expect(listed).toMatchObject({ partner_name: `Partner ${partnerId}`, status: 'active' });
    expect(JSON.stringify(mine.body)).not.toContain('api_key');
    expect(await call('DELETE', `/me/connections/${byCustomer.id}`, { auth: account.api_key })).toMatchObject({ status: 204 });
    expect(await call('GET', '/instances', { auth: byCustomer.key })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });
    expect((await partner('GET', `/partner/connections/${byCustomer.id}`)).body).toMatchObject({ status: 'revoked', revoked_by: 'customer' });

    // A new session on the revoked external_id reopens the same connection at the account step.
    const reopened = await session('cus-revoke-customer');
    expect(reopened.body.connection).toEqual({ id: byCustomer.id, external_id: 'cus-revoke-customer', status: 'pending_account' });
  });

  it('answers GET /me to any valid key: its account, project and key, and a partner-issued key its connection', async () => {
    expect(await call('GET', '/me')).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await call('GET', '/me', { auth: secretToken('svc_live_') })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await call('GET', '/me', { auth: account.api_key })).toMatchObject({
      status: 200,
      body: {
        account: { id: account.account_id, name: 'Shop', plan: 'pro', locale: 'en', country: null },
        project: { id: account.project_id, name: 'Shop', is_default: true },
        key: { role: 'owner', scopes: ['*'], prefix: account.api_key.slice(0, 13), expires_at: null },
        connection: null,
      },
    });
    // An agent key with one scope reads it too: it needs none.
    const agent = await call('POST', '/keys', { auth: account.api_key, body: { role: 'agent', scopes: ['messages:send'] } });
    expect(agent.status).toBe(201);
    expect(await call('GET', '/me', { auth: agent.body.api_key as string })).toMatchObject({
      status: 200,
      body: { key: { id: agent.body.id, role: 'agent', scopes: ['messages:send'] }, connection: null },
    });

    const { id, key } = await activeConnection('cus-me');
    const mine = await call('GET', '/me', { auth: key });
    expect(mine).toMatchObject({
      status: 200,
      body: {
        account: { id: account.account_id, plan: 'pro' },
        project: { id: account.project_id, is_default: true },
        key: { role: 'agent', scopes: ['instances:read', 'messages:send'], prefix: key.slice(0, 13) },
        connection: { id, external_id: 'cus-me', status: 'active', partner: { id: partnerId, name: `Partner ${partnerId}` } },
      },
    });
    expect(JSON.stringify(mine.body)).not.toContain(key);
    expect(JSON.stringify(mine.body)).not.toContain('hash');

    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, { get?: { responses: Record<string, { content: Record<string, { schema: { properties: object } }> }> } }> }>();
    expect(Object.keys(doc.paths['/me']?.get?.responses['200']?.content['application/json']?.schema.properties ?? {})).toEqual(['account', 'project', 'key', 'connection']);
  });

  it('revokes the connection of a deleted project once another project is the default: project_deleted, on the webhook, and the key answers connect_revoked', async () => {
    const { shop, email, id, key } = await shopWithConnection('project-deleted');
    expect((await partner('GET', `/partner/connections/${id}`)).body).toMatchObject({ status: 'active', project_id: shop.project_id });
    const owner = shop.api_key;
    expect(await call('DELETE', `/projects/${shop.project_id}`, { auth: owner })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });

    const second = await call('POST', '/projects', { auth: owner, body: { name: 'Second store' } });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const secondId = second.body.id as string;
    expect(await call('PATCH', `/projects/${secondId}`, { auth: key, body: { is_default: true } })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    for (const body of [{}, { is_default: false }, { name: '' }, { is_default: true, owner: true }]) {
      expect(await call('PATCH', `/projects/${secondId}`, { auth: owner, body }), JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    }
    expect(await call('PATCH', `/projects/${account.project_id}`, { auth: owner, body: { is_default: true } })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('PATCH', `/projects/${secondId}`, { auth: owner, body: { is_default: true } })).toMatchObject({ status: 200, body: { id: secondId, name: 'Second store', is_default: true } });
    const projects = await call<{ data: { id: string; is_default: boolean }[] }>('GET', '/projects', { auth: owner });
    expect(projects.body.data.filter((p) => p.is_default).map((p) => p.id)).toEqual([secondId]);
    // The connection stays on the project it linked, and works on.
    expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 200 });

    expect(await call('DELETE', `/projects/${shop.project_id}`, { auth: owner })).toMatchObject({ status: 204 });
    expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });
    await untilStatus(id, 'revoked');
    expect((await partner('GET', `/partner/connections/${id}`)).body).toMatchObject({ status: 'revoked', revoked_by: 'project_deleted' });
    expect(await revokedPayload(id)).toEqual({ status: 'revoked', revoked_by: 'project_deleted' });
    expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });

    // The owner key went over to the default project; the default stays, and the next connection links it.
    expect(await call('GET', '/me', { auth: owner })).toMatchObject({ status: 200, body: { project: { id: secondId, is_default: true }, key: { role: 'owner' } } });
    expect(await call('DELETE', `/projects/${secondId}`, { auth: owner })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    const again = await session('cus-project-deleted', { email });
    await linkByCode(component(again.body.session_token as string), email);
    expect((await partner('GET', `/partner/connections/${id}`)).body).toMatchObject({ status: 'pending_number', project_id: secondId });
  });

  it('revokes the connection of a deleted account: account_deleted, on the webhook, and the key answers connect_revoked', async () => {
    const { shop, id, key } = await shopWithConnection('account-deleted');
    const numbersOf = async (projectId: string) => (await clients.pool.query('SELECT instance_id FROM instances.numbers WHERE project_id = $1', [projectId])).rowCount;
    expect(await call('DELETE', '/account', { auth: key })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await call('DELETE', '/account', { auth: shop.api_key })).toMatchObject({ status: 204 });
    // Revoked by the sweeper, which follows the deletion; the key still says why it stopped.
    await untilStatus(id, 'revoked');
    expect(await call('GET', '/instances', { auth: key })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });
    expect(await call('GET', '/me', { auth: key })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });
    expect((await partner('GET', `/partner/connections/${id}`)).body).toMatchObject({ status: 'revoked', revoked_by: 'account_deleted' });
    expect(await revokedPayload(id)).toEqual({ status: 'revoked', revoked_by: 'account_deleted' });
    expect(await call('GET', '/instances', { auth: shop.api_key })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    // The account's numbers go with it: their sessions close and the projection drops them.
    await waitFor('the numbers removed', async () => ((await numbersOf(shop.project_id)) === 0 || undefined), { timeoutMs: 20_000 });
  });

  it('keeps the people of an account: admins add members, agents and partner keys may not', async () => {
    const added = await call('POST', '/users', { auth: account.api_key, body: { email: 'Staff@Shop.test', role: 'member' } });
    expect(added).toMatchObject({ status: 201, body: { email: 'staff@shop.test', role: 'member' } });
    expect(await call('POST', '/users', { auth: account.api_key, body: { email: 'staff@shop.test', role: 'admin' } })).toMatchObject({ status: 400 });
    const users = await call<{ data: { email: string; role: string }[] }>('GET', '/users', { auth: account.api_key });
    const linkers = Array.from({ length: admins }, (_, i) => [`admin${i + 1}-${env.id}@shop.test`, 'admin']);
    expect(users.body.data.map((u) => [u.email, u.role]).sort()).toEqual([...linkers, ['ana@shop.test', 'admin'], ['staff@shop.test', 'member']].sort());
    expect(await call('DELETE', `/users/${added.body.id as string}`, { auth: account.api_key })).toMatchObject({ status: 204 });
  });

  it('stops a deactivated partner: sessions 403 partner_inactive, its keys 401 connect_revoked; a rotated secret dies at once', async () => {
    const { key } = await activeConnection('cus-other-partner', secrets.other);
    expect(await call('GET', '/me', { auth: key })).toMatchObject({ status: 200, body: { connection: { external_id: 'cus-other-partner', partner: { id: otherId } } } });
    const current = api.directory.partners.get(otherId)!;
    const otherPartner = (active: boolean, secret: string) =>
      partnerRecord(otherId, { ...current, secret_hash: hashSecret(secret), active });
    await writeConfig(otherPartner(false, secrets.other));
    expect(await call('GET', '/me', { auth: key })).toMatchObject({ status: 401, body: { code: 'connect_revoked' } });
    expect(await call('POST', '/partner/connect-sessions', { auth: secrets.other, body: { external_id: 'x', customer: { name: 'A', email: 'a@b.test' } } })).toMatchObject({
      status: 403,
      body: { code: 'partner_inactive' },
    });
    const rotated = secretToken('svc_partner_');
    await writeConfig(otherPartner(true, rotated));
    expect(await call('GET', '/partner/me', { auth: secrets.other })).toMatchObject({ status: 401, body: { code: 'partner_unauthorized' } });
    expect(await call('GET', '/partner/me', { auth: rotated })).toMatchObject({ status: 200 });
  });

  it('rebuilds the connections projection from the log to the same rows', async () => {
    const rows = async (schema: string): Promise<unknown[]> =>
      (await clients.pool.query<Record<string, unknown>>(`SELECT connection_id, status, account_id, revoked_by, customer, last_event_id FROM ${schema}.connections ORDER BY connection_id`)).rows;
    await waitFor('the projection to hold every connection', async () => ((await rows('connections')).length === [...api.connections.all()].length ? true : undefined), {
      timeoutMs: 20_000,
    });
    const live = await rows('connections');
    await roles.stop();
    try {
      await replayProjection(clients, connectionsProjection);
      expect(await rows('connections')).toEqual(live);
    } finally {
      roles = await startRoles(['processor', 'connector', 'dispatcher', 'sweeper'], clients);
    }
  });

});
