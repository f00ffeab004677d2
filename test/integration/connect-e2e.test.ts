import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../processors/config/accounts.js';
import { newSigningSecret, verify } from '../../events/signature.js';
import { asEventId, newId, type PartnerId } from '../../schemas/ids.js';
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
import { openEventStream } from '../support/sse-reader.js';
import { partnerRecord } from '../support/partner-records.js';
import { Receiver } from '../support/webhook-receiver.js';
import { jsonCaller } from '../support/json-call.js';

type Body = Record<string, unknown>;
const ORIGIN = 'https://app.partner.example';

/**
 * The component's API (spec 4.5) end to end over HTTP on the real stack: a partner opens a session,
 * the customer walks account → payment → number → complete, the partner exchanges the code and
 * the key sends; the existing-account path with the code read from the SMTP server; every
 * /connect error of section 7 the flow can give.
 */
describe('Connect component API, end to end', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let now = Date.now();
  const receiver = new Receiver(() => 200);
  const partnerSecret = secretToken('svc_partner_');
  const webhookSecret = newSigningSecret();
  const partnerId = newId('ptn') as PartnerId;
  const unique = (label: string) => `${label}-${env.id}@shop.test`;

  const call = jsonCaller(() => base);
  const partner = (method: string, path: string, body?: unknown) => call(method, path, { headers: { authorization: `Bearer ${partnerSecret}` }, body });
  const component = (token: string) => (method: string, path: string, body?: unknown) =>
    call(method, path, { headers: { 'x-connect-session': token, origin: ORIGIN }, body });

  async function openSession(externalId: string, customer: Body): Promise<{ token: string; connectionId: string }> {
    const opened = await partner('POST', '/partner/connect-sessions', { external_id: externalId, customer: { name: 'Ana', ...customer } });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    return { token: opened.body.session_token as string, connectionId: (opened.body.connection as { id: string }).id };
  }

  async function writeConfig(...records: ConfigRecord[]): Promise<void> {
    await clients.producer.send(topics.config, records.map((value) => ({ key: value.entity_id, value })));
    await Promise.all(records.map((r) => api.directory.applied(r.entity_id, r.event_id, 15_000)));
  }

  async function codeFrom(email: string, count: number): Promise<string> {
    const mail = await waitFor(`code mail #${count} for ${email}`, async () => {
      const box = await readMailbox(email);
      return box.length >= count ? box[count - 1] : undefined;
    }, { timeoutMs: 20_000 });
    return /\b(\d{6})\b/.exec(mail.text)![1]!;
  }

  /** Server-sent events of `/connect/stream`, read as they come. */
  async function openStream(token: string) {
    const stream = await openEventStream(`${base}/connect/stream?session=${token}`, { origin: ORIGIN });
    expect(stream.status).toBe(200);
    return stream;
  }

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', STREAM_HEARTBEAT_MS: '500' });
    clients = await testClients(env);
    await receiver.start();
    roles = await startRoles(['processor', 'connector', 'dispatcher', 'sweeper'], clients);
    api = await startApi(clients, { listen: true, clock: () => now });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    await writeConfig(
      partnerRecord(partnerId, {
        name: 'Loja Parceira',
        secret_hash: hashSecret(partnerSecret),
        allowed_origins: [ORIGIN],
        webhook_url: `${receiver.base}/${partnerId}`,
        webhook_secret_ciphertext: createCipher(env.config.secretsKey).seal(webhookSecret),
        key_scopes: ['instances:read', 'messages:send'],
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await roles?.stop();
    await receiver.close().catch(() => undefined);
    await clients?.close();
    await env?.dispose();
  });

  it('walks a new customer from session to a key that sends, with connect.completed and message.sent on the partner webhook', async () => {
    const email = unique('new');
    const { token, connectionId } = await openSession('new-customer', { email, company: 'Padaria Sol', country: 'BR', locale: 'pt-BR', phone: '+5511988887777' });
    const c = component(token);

    const boot = await c('GET', '/connect/bootstrap');
    expect(boot.status).toBe(200);
    expect(boot.body).toMatchObject({
      step: 'account',
      status: 'pending_account',
      partner: { name: 'Loja Parceira' },
      plan: { name: 'pro', methods: ['card', 'pix'], price: { currency: 'BRL' } },
      connection: { id: connectionId, external_id: 'new-customer' },
    });
    expect(boot.body).not.toHaveProperty('existing');
    expect(await c('POST', '/connect/checkout', { method: 'card' })).toMatchObject({ status: 409, body: { code: 'account_required' } });

    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'payment', status: 'pending_payment' } });
    expect(await c('POST', '/connect/numbers', {})).toMatchObject({ status: 402, body: { code: 'payment_required' } });
    expect(await c('POST', '/connect/complete')).toMatchObject({ status: 402, body: { code: 'payment_required' } });

    const checkout = await c('POST', '/connect/checkout', { method: 'pix' });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
    // Being confirmed: another method cannot start (spec 4.5 rule 4).
    expect(await call('POST', '/sandbox/payments/confirm', { body: { client_secret: checkout.body.client_secret, outcome: 'processing' } })).toMatchObject({ status: 200 });
    expect(await c('POST', '/connect/checkout', { method: 'card' })).toMatchObject({ status: 409, body: { code: 'payment_pending' } });
    expect(await call('POST', '/sandbox/payments/confirm', { body: { client_secret: checkout.body.client_secret } })).toMatchObject({ status: 200, body: { status: 'paid' } });
    expect(await c('GET', '/connect/payment')).toMatchObject({ status: 200, body: { status: 'paid', method: 'pix', step: 'number' } });
    expect(await c('POST', '/connect/checkout', { method: 'card' })).toMatchObject({ status: 409, body: { code: 'already_paid' } });

    const number = await c('POST', '/connect/numbers', { nickname: 'Loja' });
    expect(number.status, JSON.stringify(number.body)).toBe(201);
    const instanceId = number.body.id as string;
    expect(await c('POST', '/connect/complete')).toMatchObject({ status: 409, body: { code: 'number_required' } });

    const stream = await openStream(token);
    try {
      await waitFor('the number in the projection', async () => ((await c('GET', '/connect/numbers')).body.data as unknown[]).length === 1 || undefined, { timeoutMs: 20_000 });
      expect(await c('POST', `/connect/numbers/${instanceId}/connect?method=qr`)).toMatchObject({ status: 202 });
      const qr = await waitFor('qr_code on /connect/stream', async () => stream.events.find((e) => e.event === 'qr_code'), { timeoutMs: 20_000 });
      expect((qr.data.payload as Body).qr_code).toEqual(expect.any(String));
      // The sandbox phone scans the QR it was shown.
      const qrCode = (qr.data.payload as Body).qr_code as string;
      expect(await call('POST', '/sandbox/phone/scan', { body: { qr_code: `${qrCode}x` } })).toMatchObject({ status: 404, body: { code: 'not_found' } });
      expect(await call('POST', '/sandbox/phone/scan', { body: { qr_code: qrCode, phone: '+5511988887777' } })).toMatchObject({ status: 202, body: { instance_id: instanceId } });
      await waitFor('instance.status connected on the stream', async () =>
        stream.events.find((e) => e.event === 'instance.status' && (e.data.payload as Body).status === 'connected'), { timeoutMs: 20_000 });
      expect(stream.events.map((e) => e.event).every((name) => ['qr_code', 'pairing_code', 'instance.status'].includes(name))).toBe(true);
      // A component that lost its stream resumes after the last id it saw and misses nothing.
      const resumed = await openEventStream(`${base}/connect/stream?session=${token}`, { origin: ORIGIN, 'last-event-id': qr.id! });
      try {
        const after = stream.events.slice(stream.events.indexOf(qr) + 1).map((e) => e.id);
        await waitFor('the events after the QR again', async () => resumed.events.length >= after.length || undefined, { timeoutMs: 20_000 });
        expect(resumed.events.slice(0, after.length).map((e) => e.id)).toEqual(after);
      } finally {
        resumed.close();
      }
      expect(await call('GET', `/connect/stream?session=${token}&last_event_id=nonsense`, { headers: { origin: ORIGIN } })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    } finally {
      stream.close();
    }
    // At once, as the component does on that event: the instances projection may still trail the stream.
    const completed = await c('POST', '/connect/complete');
    expect(completed).toMatchObject({ status: 200, body: { connection_id: connectionId, external_id: 'new-customer', status: 'active' } });
    expect(await c('GET', '/connect/bootstrap')).toMatchObject({ body: { step: 'manage' } });

    const exchanged = await partner('POST', '/partner/connect/exchange', { code: completed.body.code });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    expect(exchanged.body.numbers).toEqual([{ id: instanceId, phone: '+5511988887777', status: 'connected' }]);
    // The account Connect created reads phones in the customer's country (BR): a national one is understood.
    const sent = await call('POST', '/messages/text', { headers: { authorization: `Bearer ${exchanged.body.api_key as string}` }, body: { to: '(11) 91111-2222', body: 'Olá!' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);

    const ofType = (type: string) => receiver.of(partnerId).find((r) => r.eventType === type && r.body.connection?.id === connectionId);
    const done = await waitFor('connect.completed', async () => ofType('connect.completed'), { timeoutMs: 30_000 });
    const message = await waitFor('message.sent', async () => ofType('message.sent'), { timeoutMs: 30_000 });
    expect(verify(webhookSecret, done.raw, done.signature)).toBe(true);
    expect(verify(webhookSecret, message.raw, message.signature)).toBe(true);
    expect(message.body.connection).toMatchObject({ id: connectionId, external_id: 'new-customer', status: 'active' });
    expect(message.at).toBeGreaterThanOrEqual(done.at);
  });

  it('links an existing account by the code e-mailed to its admin; a member gets 403, an unknown e-mail 404', async () => {
    const boss = unique('boss');
    const staff = unique('staff');
    const owned = await createAccount(clients.producer, { name: 'Boss Co', email: boss, plan: 'pro' }, async () => undefined);
    await writeConfig({
      event_id: asEventId(newId('cfg')),
      occurred_at: Date.now(),
      account_id: owned.account_id as never,
      project_id: null,
      instance_id: null,
      entity_id: newId('usr'),
      entity: { kind: 'user', email: staff, role: 'member', name: null },
    });
    await api.directory.until(() => api.directory.defaultProjectOf(owned.account_id) !== undefined, 15_000);

    const member = component((await openSession('staff-customer', { email: staff })).token);
    expect(await member('GET', '/connect/bootstrap')).toMatchObject({ body: { existing: 'member' } });
    expect(await member('POST', '/connect/account')).toMatchObject({ status: 403, body: { code: 'account_admin_required' } });
    expect(await member('POST', '/connect/account/link', { email: unique('nobody') })).toMatchObject({ status: 404, body: { code: 'account_not_found' } });

    const { token, connectionId } = await openSession('boss-customer', { email: boss, locale: 'de' });
    const c = component(token);
    expect(await c('GET', '/connect/bootstrap')).toMatchObject({ body: { step: 'account', existing: 'admin' } });
    const sent = await c('POST', '/connect/account');
    expect(sent).toMatchObject({ status: 200, body: { step: 'verify_email', email_hint: expect.stringMatching(/^b\*\*\*@shop\.test$/) as unknown } });
    const code = await codeFrom(boss, 1);
    const mail = (await readMailbox(boss))[0]!;
    expect(mail.subject).toBe('Ihr Bestätigungscode');
    expect(mail.text).toContain('Loja Parceira');
    const wrong = code === '000000' ? '111111' : '000000';
    expect(await c('POST', '/connect/account/verify', { code: wrong })).toMatchObject({ status: 400, body: { code: 'invalid_code' } });
    expect(await c('POST', '/connect/account/resend')).toMatchObject({ status: 429, body: { code: 'rate_limited' } });
    expect(await c('POST', '/connect/account/verify', { code })).toMatchObject({ status: 200, body: { step: 'number', status: 'pending_number' } });
    expect(api.connections.get(connectionId)).toMatchObject({ account_id: owned.account_id, project_id: owned.project_id });
  });

  it('counts e-mail codes and wrong attempts per e-mail, surface and hour, uses a code up at its 5th wrong attempt, and sends a new one', async () => {
    const email = unique('limits');
    await createAccount(clients.producer, { name: 'Limits', email, plan: 'free' }, async () => undefined);
    await api.directory.until(() => api.directory.usersWithEmail(email).length > 0, 15_000);
    const c = component((await openSession('limits-customer', { email })).token);
    const resend = async () => {
      now += 61_000;
      return c('POST', '/connect/account/resend');
    };
    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'verify_email' } });
    const first = await codeFrom(email, 1);
    const wrongOf = (code: string) => (code === '999999' ? '888888' : '999999');
    for (let left = 4; left >= 0; left--) {
      expect(await c('POST', '/connect/account/verify', { code: wrongOf(first) })).toMatchObject({ status: 400, body: { code: 'invalid_code' } });
      expect(await c('GET', '/connect/bootstrap')).toMatchObject({ body: { step: 'verify_email', code_attempts_left: left } });
    }
    // The 5th wrong attempt used it up: even the right code is refused now, and the step says so.
    expect(await c('POST', '/connect/account/verify', { code: first })).toMatchObject({ status: 400, body: { code: 'invalid_code' } });

    // "Send a new code" gives one (within the e-mail's limits), with its five attempts.
    expect(await resend()).toMatchObject({ status: 200, body: { step: 'verify_email', code_attempts_left: 5 } });
    const second = await codeFrom(email, 2);
    for (let i = 0; i < 5; i++) await c('POST', '/connect/account/verify', { code: wrongOf(second) });
    now += 61_000;
    expect(await c('POST', '/connect/account/link', {})).toMatchObject({ status: 200 });
    const third = await codeFrom(email, 3);
    expect(await c('POST', '/connect/account/verify', { code: third })).toMatchObject({ status: 429, body: { code: 'code_attempts_exceeded' } });
    // Codes typed in a component (anyone with a session may type them for any e-mail) do not lock the account's admin out of the panels.
    expect(await call('POST', '/panel/login', { body: { email } })).toMatchObject({ status: 202 });
    expect(await call('POST', '/panel/login/verify', { body: { email, code: await codeFrom(email, 4) } })).toMatchObject({ status: 200 });
    expect(await resend()).toMatchObject({ status: 200 });
    expect(await resend()).toMatchObject({ status: 200 });
    expect(await resend()).toMatchObject({ status: 429, body: { code: 'code_sends_exceeded' } });
    // An hour later both ceilings have passed (on a new session: the first lived 30 minutes).
    now += 3_600_000;
    expect(await c('POST', '/connect/account/resend')).toMatchObject({ status: 401, body: { code: 'connect_session_expired' } });
    const later = component((await openSession('limits-customer', { email })).token);
    expect(await later('GET', '/connect/bootstrap')).toMatchObject({ body: { step: 'verify_email' } });
    expect(await later('POST', '/connect/account/resend')).toMatchObject({ status: 200 });
    const fresh = await codeFrom(email, 7);
    expect(await later('POST', '/connect/account/verify', { code: fresh })).toMatchObject({ status: 200, body: { step: 'payment' } });
  });

  it("pairs a number by the code the stream shows, and refuses a number past the plan's numbers with 402 quota_exceeded", async () => {
    const email = unique('quota');
    const owned = await createAccount(clients.producer, { name: 'Quota', email, plan: 'pro' }, async () => undefined);
    await api.directory.until(() => api.directory.defaultProjectOf(owned.account_id) !== undefined && api.directory.usersWithEmail(email).length > 0, 15_000);
    const { token } = await openSession('quota-customer', { email });
    const c = component(token);
    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'verify_email' } });
    expect(await c('POST', '/connect/account/verify', { code: await codeFrom(email, 1) })).toMatchObject({ status: 200, body: { step: 'number' } });

    const first = await c('POST', '/connect/numbers', { nickname: 'Caixa' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const stream = await openStream(token);
    try {
      await waitFor('the number in the projection', async () => ((await c('GET', '/connect/numbers')).body.data as unknown[]).length === 1 || undefined, { timeoutMs: 20_000 });
      expect(await c('POST', `/connect/numbers/${first.body.id as string}/connect?method=code`)).toMatchObject({ status: 202 });
      const shown = await waitFor('pairing_code on /connect/stream', async () => stream.events.find((e) => e.event === 'pairing_code'), { timeoutMs: 20_000 });
      const pairingCode = (shown.data.payload as Body).pairing_code as string;
      // Typed as the phone shows it, in two halves.
      expect(await call('POST', '/sandbox/phone/scan', { body: { pairing_code: `${pairingCode.slice(0, 4)}-${pairingCode.slice(4).toLowerCase()}` } })).toMatchObject({
        status: 202,
        body: { instance_id: first.body.id },
      });
      await waitFor('connected on the stream', async () =>
        stream.events.find((e) => e.event === 'instance.status' && (e.data.payload as Body).status === 'connected'), { timeoutMs: 20_000 });
    } finally {
      stream.close();
    }

    // Pro holds 10 numbers; each is counted once the instances projection has it.
    for (let i = 2; i <= 10; i++) {
      expect(await c('POST', '/connect/numbers', {}), `number ${i}`).toMatchObject({ status: 201 });
      await waitFor(`${i} numbers in the projection`, async () => ((await c('GET', '/connect/numbers')).body.data as unknown[]).length === i || undefined, { timeoutMs: 20_000 });
    }
    expect(await c('POST', '/connect/numbers', {})).toMatchObject({ status: 402, body: { code: 'quota_exceeded' } });
  });

  it('answers the session, origin and revocation rows of section 7', async () => {
    const { token, connectionId } = await openSession('rows-customer', { email: unique('rows'), country: 'DE' });
    expect(await call('GET', '/connect/bootstrap', { headers: { origin: ORIGIN } })).toMatchObject({ status: 401, body: { code: 'connect_session_required' } });
    expect(await call('GET', `/connect/bootstrap?session=${token}`, { headers: { origin: ORIGIN } })).toMatchObject({ status: 401, body: { code: 'connect_session_required' } });
    expect(await component(secretToken('cs_'))('GET', '/connect/bootstrap')).toMatchObject({ status: 401, body: { code: 'invalid_connect_session' } });
    expect(await call('GET', '/connect/bootstrap', { headers: { 'x-connect-session': token, origin: 'https://evil.example' } })).toMatchObject({
      status: 403,
      body: { code: 'origin_not_allowed' },
    });
    expect(await call('GET', '/connect/bootstrap', { headers: { 'x-connect-session': token } })).toMatchObject({ status: 403, body: { code: 'origin_not_allowed' } });
    expect(await call('GET', '/connect/bootstrap', { headers: { 'x-connect-session': token, origin: 'HTTPS://APP.PARTNER.EXAMPLE/' } })).toMatchObject({ status: 200 });
    // CORS echoes any origin, so the component on a page the server refuses reads the refusal (and says it in onError), never the data.
    const corsOf = async (method: 'OPTIONS' | 'GET', origin: string) => {
      const response = await request(`${base}/connect/bootstrap`, {
        method,
        headers: { origin, 'x-connect-session': method === 'GET' ? token : '', 'access-control-request-method': 'GET' },
      });
      await response.body.dump();
      return { status: response.statusCode, allowOrigin: response.headers['access-control-allow-origin'] };
    };
    expect(await corsOf('OPTIONS', ORIGIN)).toEqual({ status: 204, allowOrigin: ORIGIN });
    expect(await corsOf('OPTIONS', 'https://evil.example')).toEqual({ status: 204, allowOrigin: 'https://evil.example' });
    expect(await corsOf('GET', ORIGIN)).toEqual({ status: 200, allowOrigin: ORIGIN });
    expect(await corsOf('GET', 'https://evil.example')).toEqual({ status: 403, allowOrigin: 'https://evil.example' });
    expect(await corsOf('GET', 'null')).toMatchObject({ status: 403 });

    const c = component(token);
    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'payment' } });
    expect(await c('POST', '/connect/checkout', { method: 'pix' })).toMatchObject({ status: 422, body: { code: 'method_unavailable' } });

    now += 30 * 60_000;
    expect(await c('GET', '/connect/bootstrap')).toMatchObject({ status: 401, body: { code: 'connect_session_expired' } });
    // The component reads the expiry (to raise onError and reopen): the answer carries CORS.
    expect(await corsOf('GET', ORIGIN)).toEqual({ status: 401, allowOrigin: ORIGIN });
    const fresh = component((await openSession('rows-customer', { email: unique('rows') })).token);
    expect(await partner('DELETE', `/partner/connections/${connectionId}`)).toMatchObject({ status: 204 });
    expect(await fresh('GET', '/connect/bootstrap')).toMatchObject({ status: 409, body: { code: 'connection_revoked' } });
    expect(await fresh('POST', '/connect/complete')).toMatchObject({ status: 409, body: { code: 'connection_revoked' } });
  });
});
