import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../processors/config/accounts.js';
import { newSigningSecret, verify } from '../../events/signature.js';
import { newId, type PartnerId } from '../../schemas/ids.js';
import type { PaymentRecord } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { jsonCaller } from '../support/json-call.js';
import { readMailbox } from '../support/mailbox.js';
import { partnerRecord } from '../support/partner-records.js';
import { openEventStream } from '../support/sse-reader.js';
import { collectTopic } from '../support/topic-collector.js';
import { Receiver } from '../support/webhook-receiver.js';
import { canSignIn } from '../support/sign-in.js';

type Body = Record<string, unknown>;
const ORIGIN = 'https://app.partner.example';
const DAY_MS = 86_400_000;

/**
 * The sandbox payment provider's test mode over HTTP on the real stack: a customer account linked
 * to a partner through the component, Pro paid in the sandbox, a number paired and the key
 * exchanged; then renewals that succeed or fail, and the test clock, driven by the account's own
 * key. A lapse suspends the connection (connect.suspended, 402 on the key, the component reopens
 * on payment with its notice) and paying again resumes it, each step a record on `gw.payments`.
 */
describe('sandbox payments: renewals and the test clock', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let payments: { values: PaymentRecord[]; consumer: TopicConsumer };
  // The API's clock stands still between payments, so periods can be computed exactly; the test clock moves them.
  let now = Date.now();
  const receiver = new Receiver(() => 200);
  const partnerSecret = secretToken('svc_partner_');
  const webhookSecret = newSigningSecret();
  const partnerId = newId('ptn') as PartnerId;

  const call = jsonCaller(() => base);
  const partner = (method: string, path: string, body?: unknown) => call(method, path, { headers: { authorization: `Bearer ${partnerSecret}` }, body });
  const withKey = (key: string) => (method: string, path: string, body?: unknown) => call(method, path, { headers: { authorization: `Bearer ${key}` }, body });
  const component = (token: string) => (method: string, path: string, body?: unknown) =>
    call(method, path, { headers: { 'x-connect-session': token, origin: ORIGIN }, body });
  type Caller = ReturnType<typeof component>;

  interface Customer {
    readonly externalId: string;
    readonly connectionId: string;
    readonly accountId: string;
    /** The account's own (owner) key: it drives the sandbox. */
    readonly owner: ReturnType<typeof withKey>;
    /** The key the partner's exchange issued. */
    readonly issued: ReturnType<typeof withKey>;
    readonly c: Caller;
  }

  const statusOf = (connectionId: string) => api.connections.get(connectionId)?.to_status;
  const untilStatus = (connectionId: string, status: string) =>
    waitFor(`connection ${status}`, () => statusOf(connectionId) === status || undefined, { timeoutMs: 20_000 });
  const planOf = (accountId: string) => api.directory.accounts.get(accountId)?.plan;
  const untilPlan = (accountId: string, plan: string) => api.directory.until(() => planOf(accountId) === plan, 15_000);
  const partnerEvents = (type: string, connectionId: string) => receiver.of(partnerId).filter((r) => r.eventType === type && r.body.connection?.id === connectionId);
  const recordsOf = (accountId: string) => payments.values.filter((r) => r.account_id === accountId);

  async function openSession(externalId: string, email: string): Promise<{ c: Caller; token: string; connectionId: string }> {
    const opened = await partner('POST', '/partner/connect-sessions', { external_id: externalId, customer: { name: 'Ana', email, country: 'BR', locale: 'pt-BR' } });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const token = opened.body.session_token as string;
    return { c: component(token), token, connectionId: (opened.body.connection as { id: string }).id };
  }

  /** Checkout by card in the component, a second later, confirmed paid by the sandbox form's route. */
  async function pay(c: Caller): Promise<void> {
    // A later checkout is a later attempt (the latest is the one the component shows).
    now += 1_000;
    const checkout = await c('POST', '/connect/checkout', { method: 'card' });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
    expect(await call('POST', '/sandbox/payments/confirm', { body: { client_secret: checkout.body.client_secret, outcome: 'paid' } })).toMatchObject({
      status: 200,
      body: { status: 'paid' },
    });
  }

  /**
   * A Free account of its own (with an owner key), linked through the component by the code
   * e-mailed to it, Pro paid in the sandbox, a number paired by the sandbox phone, completed, and
   * the key the partner's exchange issues.
   */
  async function connectedCustomer(label: string): Promise<Customer> {
    const email = `${label}-${env.id}@shop.test`;
    const account = await createAccount(clients.producer, { name: label, email, plan: 'free' }, async () => undefined);
    await api.directory.until(() => api.directory.usersWithEmail(email).length > 0 && canSignIn(api.directory, account.account_id), 15_000);
    const externalId = `cus-${label}`;
    const { c, token, connectionId } = await openSession(externalId, email);
    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'verify_email' } });
    const mail = await waitFor(`the code for ${email}`, async () => (await readMailbox(email))[0], { timeoutMs: 20_000 });
    expect(await c('POST', '/connect/account/verify', { code: /\b(\d{6})\b/.exec(mail.text)![1] })).toMatchObject({ status: 200, body: { step: 'payment' } });
    await pay(c);
    await untilPlan(account.account_id, 'pro');

    const number = await c('POST', '/connect/numbers', { nickname: 'Loja' });
    expect(number.status, JSON.stringify(number.body)).toBe(201);
    const stream = await openEventStream(`${base}/connect/stream?session=${token}`, { origin: ORIGIN });
    try {
      await waitFor('the number in the projection', async () => ((await c('GET', '/connect/numbers')).body.data as unknown[]).length === 1 || undefined, { timeoutMs: 20_000 });
      expect(await c('POST', `/connect/numbers/${number.body.id as string}/connect?method=qr`)).toMatchObject({ status: 202 });
      const qr = await waitFor('qr_code', async () => stream.events.find((e) => e.event === 'qr_code'), { timeoutMs: 20_000 });
      expect(await call('POST', '/sandbox/phone/scan', { body: { qr_code: (qr.data.payload as Body).qr_code } })).toMatchObject({ status: 202 });
      await waitFor('connected on the stream', async () =>
        stream.events.find((e) => e.event === 'instance.status' && (e.data.payload as Body).status === 'connected'), { timeoutMs: 20_000 });
    } finally {
      stream.close();
    }
    const completed = await c('POST', '/connect/complete');
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    const exchanged = await partner('POST', '/partner/connect/exchange', { code: completed.body.code });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    return { externalId, connectionId, accountId: account.account_id, owner: withKey(account.api_key), issued: withKey(exchanged.body.api_key as string), c };
  }

  interface Subscription {
    plan: string;
    status: string;
    payment: { attempt_id: string; status: string; renewals: number } | null;
    latest_attempt: { attempt_id: string; status: string } | null;
  }

  /** `GET /me/subscription` once the payments projection holds what `ready` looks for. */
  const untilSubscription = (customer: Customer, ready: (s: Subscription) => boolean) =>
    waitFor('the subscription projected', async () => {
      const read = (await customer.owner('GET', '/me/subscription')).body as unknown as Subscription;
      return ready(read) ? read : undefined;
    }, { timeoutMs: 15_000 });

  /** The end of the paid period, as the component reads it. */
  async function periodEnd(c: Caller): Promise<number> {
    const payment = await c('GET', '/connect/payment');
    expect(payment.body.status).toBe('paid');
    return Date.parse(payment.body.period_end as string);
  }

  /** A lapse seen from outside: Free, suspended with its time, connect.suspended, 402 on the key, the component back on payment. */
  async function expectSuspended(customer: Customer): Promise<void> {
    await untilPlan(customer.accountId, 'free');
    await untilStatus(customer.connectionId, 'suspended');
    const read = await partner('GET', `/partner/connections/${customer.connectionId}`);
    expect(read.body).toMatchObject({ status: 'suspended', suspended_at: expect.any(String) as unknown });
    const suspended = await waitFor('connect.suspended', () => partnerEvents('connect.suspended', customer.connectionId)[0], { timeoutMs: 30_000 });
    expect(verify(webhookSecret, suspended.raw, suspended.signature)).toBe(true);
    expect(await customer.issued('GET', '/instances')).toMatchObject({ status: 402, body: { code: 'connect_suspended' } });
    const reopened = component((await openSession(customer.externalId, `${customer.externalId}@shop.test`)).token);
    expect((await reopened('GET', '/connect/bootstrap')).body).toMatchObject({
      step: 'payment',
      status: 'suspended',
      plan: { payment_notice: 'lapsed' },
      payment: { provider: 'sandbox', status: 'lapsed' },
    });
  }

  /** Paying again through the component and the sandbox: active, connect.resumed, the key works. */
  async function expectResumedAfterPaying(customer: Customer): Promise<void> {
    await pay(customer.c);
    await untilStatus(customer.connectionId, 'active');
    await waitFor('connect.resumed', () => partnerEvents('connect.resumed', customer.connectionId)[0], { timeoutMs: 30_000 });
    expect(await customer.issued('GET', '/instances')).toMatchObject({ status: 200 });
  }

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', SWEEP_INTERVAL_MS: '3600000' });
    clients = await testClients(env);
    await receiver.start();
    roles = await startRoles(['processor', 'connector', 'dispatcher', 'sweeper'], clients);
    api = await startApi(clients, { listen: true, clock: () => now });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    payments = await collectTopic(clients, topics.payments, `${env.id}.test.payments`);
    const partnerConfig = partnerRecord(partnerId, {
      name: 'Loja Parceira',
      secret_hash: hashSecret(partnerSecret),
      allowed_origins: [ORIGIN],
      webhook_url: `${receiver.base}/${partnerId}`,
      webhook_secret_ciphertext: createCipher(env.config.secretsKey).seal(webhookSecret),
      key_scopes: ['instances:read', 'messages:send'],
    });
    await clients.producer.send(topics.config, [{ key: partnerConfig.entity_id, value: partnerConfig }]);
    await api.directory.applied(partnerConfig.entity_id, partnerConfig.event_id, 15_000);
  }, 120_000);

  afterAll(async () => {
    await payments?.consumer.stop();
    await api?.stop();
    await roles?.stop();
    await receiver.close().catch(() => undefined);
    await clients?.close();
    await env?.dispose();
  });

  it('renews on request: paid moves the period 30 days on, failed lapses it into suspension, and paying again resumes', async () => {
    const customer = await connectedCustomer('renew');
    const firstEnd = await periodEnd(customer.c);
    expect(firstEnd).toBe(now + 30 * DAY_MS);

    // Only the account's own key drives its subscription: not a stranger, not the partner's key.
    expect(await call('POST', '/sandbox/payments/renew', { body: {} })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await customer.issued('POST', '/sandbox/payments/renew', { outcome: 'failed' })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    const stranger = await createAccount(clients.producer, { name: 'Stranger', email: `stranger-${env.id}@shop.test`, plan: 'pro' }, async () => undefined);
    await api.directory.until(() => canSignIn(api.directory, stranger.account_id), 15_000);
    expect(await withKey(stranger.api_key)('POST', '/sandbox/payments/renew', { outcome: 'failed' })).toMatchObject({ status: 402, body: { code: 'payment_required' } });
    expect(await customer.owner('POST', '/sandbox/payments/renew', { outcome: 'lapsed' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });

    const renewed = await customer.owner('POST', '/sandbox/payments/renew', { outcome: 'paid' });
    expect(renewed).toMatchObject({ status: 200, body: { status: 'paid', renewals: ['paid'], period_end: new Date(firstEnd + 30 * DAY_MS).toISOString() } });
    expect(await periodEnd(customer.c)).toBe(firstEnd + 30 * DAY_MS);
    expect(planOf(customer.accountId)).toBe('pro');
    expect(statusOf(customer.connectionId)).toBe('active');
    expect(await customer.issued('GET', '/instances')).toMatchObject({ status: 200 });
    const renewedSubscription = await untilSubscription(customer, (s) => s.payment?.renewals === 1);
    const firstAttempt = renewedSubscription.payment!.attempt_id;
    expect(renewedSubscription).toMatchObject({
      plan: 'pro',
      status: 'active',
      payment: { provider: 'sandbox', method: 'card', status: 'paid', period_end: new Date(firstEnd + 30 * DAY_MS).toISOString() },
    });

    const lapsed = await customer.owner('POST', '/sandbox/payments/renew', { outcome: 'failed' });
    expect(lapsed).toMatchObject({ status: 200, body: { status: 'lapsed', renewals: ['lapsed'] } });
    await expectSuspended(customer);
    expect(await untilSubscription(customer, (s) => s.payment?.status === 'lapsed')).toMatchObject({ plan: 'free', status: 'lapsed', payment: { attempt_id: firstAttempt, renewals: 1 } });
    expect(await customer.owner('POST', '/sandbox/payments/renew', {})).toMatchObject({ status: 402, body: { code: 'payment_required' } });

    await expectResumedAfterPaying(customer);
    expect(await periodEnd(customer.c)).toBe(now + 30 * DAY_MS);
    // Paid again by a new attempt: a new subscription.
    const again = await untilSubscription(customer, (s) => s.payment?.status === 'paid' && s.payment.attempt_id !== firstAttempt);
    expect(again).toMatchObject({ plan: 'pro', status: 'active', payment: { renewals: 0, period_end: new Date(now + 30 * DAY_MS).toISOString() } });
    expect(again.latest_attempt).toMatchObject({ attempt_id: again.payment!.attempt_id, status: 'paid' });

    const facts = await waitFor('the payment records', () => (recordsOf(customer.accountId).length >= 6 ? recordsOf(customer.accountId) : undefined), { timeoutMs: 15_000 });
    expect(facts.map((r) => r.status)).toEqual(['pending', 'paid', 'paid', 'lapsed', 'pending', 'paid']);
    expect(facts.every((r) => r.provider === 'sandbox' && r.connection_id === customer.connectionId && r.currency === 'BRL')).toBe(true);
    expect(facts[2]).toMatchObject({ period_end: firstEnd + 30 * DAY_MS, reason: 'renewal charged by the sandbox' });
    expect(facts[3]).toMatchObject({ reason: 'renewal refused by the sandbox' });
  });

  it('moves a subscription on its test clock: each period end passed renews as the saved method does, until one lapses', async () => {
    const customer = await connectedCustomer('clock');
    const firstEnd = await periodEnd(customer.c);
    const advance = (body: Body) => customer.owner('POST', '/sandbox/payments/advance', body);

    expect(await advance({ days: 61 })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await advance({ days: 0 })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await customer.issued('POST', '/sandbox/payments/advance', { days: 1 })).toMatchObject({ status: 403, body: { code: 'forbidden' } });

    // Short of the period end: only the clock moves.
    expect(await advance({ days: 10 })).toMatchObject({
      status: 200,
      body: { status: 'paid', renewals: [], clock: new Date(now + 10 * DAY_MS).toISOString(), period_end: new Date(firstEnd).toISOString() },
    });
    // Past it: the saved card is charged (paid, the default), the period moves on.
    expect(await advance({ days: 25 })).toMatchObject({
      status: 200,
      body: { status: 'paid', renewals: ['paid'], clock: new Date(now + 35 * DAY_MS).toISOString(), period_end: new Date(firstEnd + 30 * DAY_MS).toISOString() },
    });
    expect(statusOf(customer.connectionId)).toBe('active');
    // Two periods at most; with a card that cannot be charged, the first renewal passed lapses and no other follows.
    expect(await advance({ days: 60, outcome: 'failed' })).toMatchObject({
      status: 200,
      body: { status: 'lapsed', renewals: ['lapsed'], clock: new Date(now + 95 * DAY_MS).toISOString() },
    });
    await expectSuspended(customer);

    // Paid again on the same clock: the new period runs from the clock's time.
    await expectResumedAfterPaying(customer);
    expect(await periodEnd(customer.c)).toBe(now + 95 * DAY_MS + 30 * DAY_MS);
    expect(await advance({ days: 40 })).toMatchObject({ status: 200, body: { status: 'paid', renewals: ['paid'], period_end: new Date(now + 155 * DAY_MS).toISOString() } });

    const facts = await waitFor('the payment records', () => (recordsOf(customer.accountId).length >= 7 ? recordsOf(customer.accountId) : undefined), { timeoutMs: 15_000 });
    expect(facts.map((r) => r.status)).toEqual(['pending', 'paid', 'paid', 'lapsed', 'pending', 'paid', 'paid']);
  });
});
