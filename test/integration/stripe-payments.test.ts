import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentRefused } from '../../connectors/payments/provider.js';
import { StripePayments } from '../../connectors/payments/stripe.js';
import { newSigningSecret } from '../../events/signature.js';
import { asAccountId, newId, type PartnerId } from '../../schemas/ids.js';
import type { ConfigRecord, PaymentRecord } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { readMailbox } from '../support/mailbox.js';
import { partnerRecord } from '../support/partner-records.js';
import { openEventStream } from '../support/sse-reader.js';
import { StripeStandin } from '../support/stripe-standin.js';
import { collectTopic } from '../support/topic-collector.js';
import { jsonCaller } from '../support/json-call.js';

type Body = Record<string, unknown>;
const ORIGIN = 'https://app.partner.example';
const DAY_MS = 86_400_000;

/**
 * The Stripe provider over HTTP on the real stack, with the `stripe` package pointed at a local
 * stand-in of Stripe's API and Stripe's events signed with the package's test-header helper:
 * the card path (renewal charged, lapse suspends, paying again resumes), the Pix path (method
 * switches cancel at Stripe, the renewal link e-mailed), and what is refused.
 */
describe('Stripe payments', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let payments: { values: PaymentRecord[]; consumer: TopicConsumer };
  const standin = new StripeStandin(`whsec_${secretToken('', 24)}`);
  const partnerSecret = secretToken('svc_partner_');
  const partnerId = newId('ptn') as PartnerId;
  const unique = (label: string) => `${label}-${env.id}@shop.test`;

  const call = jsonCaller(() => base);
  const partner = (method: string, path: string, body?: unknown) => call(method, path, { headers: { authorization: `Bearer ${partnerSecret}` }, body });
  const component = (token: string) => (method: string, path: string, body?: unknown) =>
    call(method, path, { headers: { 'x-connect-session': token, origin: ORIGIN }, body });

  async function openSession(externalId: string, customer: Body): Promise<{ c: ReturnType<typeof component>; token: string; connectionId: string }> {
    const opened = await partner('POST', '/partner/connect-sessions', { external_id: externalId, customer: { name: 'Ana', ...customer } });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const token = opened.body.session_token as string;
    return { c: component(token), token, connectionId: (opened.body.connection as { id: string }).id };
  }

  const accountOf = (connectionId: string) => api.connections.get(connectionId)!.account_id!;
  const planOf = (connectionId: string) => api.directory.accounts.get(accountOf(connectionId))?.plan;
  const statusOf = (connectionId: string) => api.connections.get(connectionId)?.to_status;
  // A payment's effect is the payments processor's: it follows the webhook's answer.
  const untilPlan = (connectionId: string, plan: string) => api.directory.until(() => planOf(connectionId) === plan, 15_000);
  const untilStatus = (connectionId: string, status: string) => api.connections.until(() => statusOf(connectionId) === status, 15_000);
  /** The component's poll once the payments processor has applied the payment. */
  const untilPaid = (c: ReturnType<typeof component>) =>
    waitFor('the payment applied', async () => {
      const payment = await c('GET', '/connect/payment');
      return payment.body.status === 'paid' ? payment : undefined;
    }, { timeoutMs: 15_000 });
  const recordsOf = (connectionId: string) => payments.values.filter((r) => r.account_id === accountOf(connectionId));

  /** The number step walked on the sandbox network, then completion and the partner's exchange: the key. */
  async function connectAndComplete(c: ReturnType<typeof component>, token: string): Promise<string> {
    const number = await c('POST', '/connect/numbers', { nickname: 'Loja' });
    expect(number.status, JSON.stringify(number.body)).toBe(201);
    const instanceId = number.body.id as string;
    const stream = await openEventStream(`${base}/connect/stream?session=${token}`, { origin: ORIGIN });
    try {
      await waitFor('the number in the projection', async () => ((await c('GET', '/connect/numbers')).body.data as unknown[]).length === 1 || undefined, { timeoutMs: 20_000 });
      expect(await c('POST', `/connect/numbers/${instanceId}/connect?method=qr`)).toMatchObject({ status: 202 });
      const qr = await waitFor('qr_code', async () => stream.events.find((e) => e.event === 'qr_code'), { timeoutMs: 20_000 });
      expect(await call('POST', '/sandbox/phone/scan', { body: { qr_code: (qr.data.payload as Body).qr_code } })).toMatchObject({ status: 202 });
    } finally {
      stream.close();
    }
    await waitFor('the number connected', async () => ((await c('GET', '/connect/numbers')).body.data as { status: string }[])[0]?.status === 'connected' || undefined, {
      timeoutMs: 20_000,
    });
    const completed = await c('POST', '/connect/complete');
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    const exchanged = await partner('POST', '/partner/connect/exchange', { code: completed.body.code });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    return exchanged.body.api_key as string;
  }

  beforeAll(async () => {
    const stripeUrl = await standin.start();
    env = await createTestEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      PAYMENT_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: 'sk_test_gateway',
      STRIPE_PUBLISHABLE_KEY: 'pk_test_gateway',
      STRIPE_WEBHOOK_SECRET: standin.webhookSecret,
      STRIPE_PRODUCT: 'prod_pro',
      STRIPE_API_URL: stripeUrl,
    });
    clients = await testClients(env);
    roles = await startRoles(['processor', 'connector', 'sweeper'], clients);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    standin.webhookUrl = `${base}/payments/stripe/webhook`;
    payments = await collectTopic(clients, topics.payments, `${env.id}.test.payments`);
    const record: ConfigRecord = partnerRecord(partnerId, {
      name: 'Loja Parceira',
      secret_hash: hashSecret(partnerSecret),
      allowed_origins: [ORIGIN],
      webhook_secret_ciphertext: createCipher(env.config.secretsKey).seal(newSigningSecret()),
      key_scopes: ['instances:read', 'messages:send'],
    });
    await clients.producer.send(topics.config, [{ key: record.entity_id, value: record }]);
    await api.directory.applied(record.entity_id, record.event_id, 15_000);
  }, 120_000);

  afterAll(async () => {
    await payments?.consumer.stop();
    await api?.stop();
    await roles?.stop();
    await clients?.close();
    await standin.close();
    await env?.dispose();
  });

  it('card: subscribes with a saved card, renews by charging it, lapses into suspension and resumes when paid again', async () => {
    const { c, token, connectionId } = await openSession('stripe-card', { email: unique('card'), company: 'Diner', country: 'US', locale: 'en-US' });
    expect((await c('GET', '/connect/bootstrap')).body).toMatchObject({
      plan: { methods: ['card'], price: { amount: 2_900, currency: 'USD', interval: 'month' } },
      payment: { provider: 'stripe', publishable_key: 'pk_test_gateway', status: 'none' },
    });
    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'payment' } });
    expect(await c('POST', '/connect/checkout', { method: 'pix' })).toMatchObject({ status: 422, body: { code: 'method_unavailable' } });

    const checkout = await c('POST', '/connect/checkout', { method: 'card' });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
    const secret = checkout.body.client_secret as string;
    expect(secret).toMatch(/^pi_[0-9a-f]+_secret_/);
    const created = standin.callsTo('POST', /^\/v1\/subscriptions$/).at(-1)!.params;
    expect(created).toMatchObject({
      'items[0][price_data][currency]': 'usd',
      'items[0][price_data][unit_amount]': '2900',
      'items[0][price_data][product]': 'prod_pro',
      'items[0][price_data][recurring][interval]': 'month',
      payment_behavior: 'default_incomplete',
      'payment_settings[save_default_payment_method]': 'on_subscription',
      'payment_settings[payment_method_types][0]': 'card',
    });
    const subscription = standin.subscriptionOf(secret);

    // Confirmed in the browser, the bank still deciding: another checkout waits (spec 4.5 rule 4).
    expect(await standin.processing(secret)).toBe(200);
    expect(await c('GET', '/connect/payment')).toMatchObject({ body: { status: 'processing', method: 'card' } });
    expect(await c('POST', '/connect/checkout', { method: 'card' })).toMatchObject({ status: 409, body: { code: 'payment_pending' } });

    expect(await standin.pay(secret)).toBe(200);
    const paid = await untilPaid(c);
    expect(paid.body).toMatchObject({ status: 'paid', method: 'card', step: 'number' });
    const firstEnd = Date.parse(paid.body.period_end as string);
    expect(firstEnd - Date.now()).toBeGreaterThan(29 * DAY_MS);
    await untilPlan(connectionId, 'pro');
    const key = await connectAndComplete(c, token);
    expect(await call('GET', '/instances', { headers: { authorization: `Bearer ${key}` } })).toMatchObject({ status: 200 });

    // A renewal charges the saved card: the period moves on and nothing else changes.
    expect((await standin.renew(subscription.id)).status).toBe(200);
    expect(Date.parse((await c('GET', '/connect/payment')).body.period_end as string)).toBe(firstEnd + 30 * DAY_MS);

    // Retries ran out: Free, suspended at once, the key answers 402, the component reopens on payment.
    expect(await standin.end(subscription.id, 'unpaid')).toBe(200);
    await untilPlan(connectionId, 'free');
    await untilStatus(connectionId, 'suspended');
    expect(await call('GET', '/instances', { headers: { authorization: `Bearer ${key}` } })).toMatchObject({ status: 402, body: { code: 'connect_suspended' } });
    expect((await c('GET', '/connect/bootstrap')).body).toMatchObject({ step: 'payment', plan: { payment_notice: 'lapsed' }, payment: { status: 'lapsed' } });

    const again = await c('POST', '/connect/checkout', { method: 'card' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(standin.callsTo('POST', /^\/v1\/customers$/).filter((call) => call.params.email === unique('card'))).toHaveLength(1);
    expect(await standin.pay(again.body.client_secret as string)).toBe(200);
    await untilStatus(connectionId, 'active');
    expect(await call('GET', '/instances', { headers: { authorization: `Bearer ${key}` } })).toMatchObject({ status: 200 });

    const facts = await waitFor('the payment records', async () => (recordsOf(connectionId).length >= 6 ? recordsOf(connectionId) : undefined), { timeoutMs: 15_000 });
    expect(facts.map((r) => r.status)).toEqual(['pending', 'paid', 'paid', 'lapsed', 'pending', 'paid']);
    expect(facts.every((r) => r.provider === 'stripe' && r.currency === 'USD' && r.amount === 2_900)).toBe(true);
  });

  it('pix: only in BRL, a switch of method cancels the attempt at Stripe, the renewal link arrives by e-mail', async () => {
    const email = unique('pix');
    const { c, connectionId } = await openSession('stripe-pix', { email, company: 'Padaria', country: 'BR', locale: 'pt-BR' });
    expect((await c('GET', '/connect/bootstrap')).body).toMatchObject({ plan: { methods: ['card', 'pix'], price: { amount: 14_900, currency: 'BRL' } } });
    await c('POST', '/connect/account');

    const pix = await c('POST', '/connect/checkout', { method: 'pix' });
    expect(pix.status, JSON.stringify(pix.body)).toBe(200);
    expect(standin.callsTo('POST', /^\/v1\/subscriptions$/).at(-1)!.params).toMatchObject({
      collection_method: 'send_invoice',
      days_until_due: '3',
      'payment_settings[payment_method_types][0]': 'pix',
      'items[0][price_data][currency]': 'brl',
    });
    const pixSubscription = standin.subscriptionOf(pix.body.client_secret as string);
    expect(standin.callsTo('POST', new RegExp(`^/v1/invoices/${pixSubscription.latest}/finalize$`))).toHaveLength(1);

    const card = await c('POST', '/connect/checkout', { method: 'card' });
    expect(card.status).toBe(200);
    expect(standin.statusOf(pixSubscription.id)).toBe('canceled');
    const back = await c('POST', '/connect/checkout', { method: 'pix' });
    expect(standin.statusOf(standin.subscriptionOf(card.body.client_secret as string).id)).toBe('canceled');
    expect(await c('GET', '/connect/payment')).toMatchObject({ body: { status: 'pending', method: 'pix', attempt_id: back.body.attempt_id } });

    const subscription = standin.subscriptionOf(back.body.client_secret as string);
    expect(await standin.pay(back.body.client_secret as string)).toBe(200);
    const paid = await untilPaid(c);
    expect(paid.body).toMatchObject({ status: 'paid', method: 'pix', step: 'number' });

    const renewal = await standin.renew(subscription.id);
    expect(renewal.status).toBe(200);
    const mail = await waitFor('the renewal e-mail', async () => (await readMailbox(email)).find((m) => m.subject === 'Renove seu plano Pro'), { timeoutMs: 20_000 });
    expect(mail.text).toContain(`https://invoice.stripe.test/i/${subscription.latest}`);
    expect(mail.text.replace(/\s/g, ' ')).toContain('R$ 149,00');
    expect(await standin.pay(renewal.clientSecret)).toBe(200);
    expect(Date.parse((await c('GET', '/connect/payment')).body.period_end as string)).toBe(Date.parse(paid.body.period_end as string) + 30 * DAY_MS);

    expect(await standin.end(subscription.id, 'canceled')).toBe(200);
    await untilPlan(connectionId, 'free');
    expect(await c('GET', '/connect/payment')).toMatchObject({ body: { status: 'lapsed' } });
    const facts = recordsOf(connectionId).map((r) => `${r.method}:${r.status}`);
    expect(facts).toEqual(['pix:pending', 'pix:canceled', 'card:pending', 'card:canceled', 'pix:pending', 'pix:paid', 'pix:pending', 'pix:paid', 'pix:lapsed']);
  });

  it("refuses what is not Stripe's, answers 502 payment_unavailable when Stripe fails, and offers no Pix the account has not enabled", async () => {
    const { c, connectionId } = await openSession('stripe-errors', { email: unique('errors'), company: 'Café', country: 'BR', locale: 'pt-BR' });
    await c('POST', '/connect/account');
    standin.failNext('/v1/subscriptions', 400, 'invalid_request_error', 'The payment method type "pix" is invalid.');
    expect(await c('POST', '/connect/checkout', { method: 'pix' })).toMatchObject({ status: 502, body: { code: 'payment_unavailable' } });
    expect(await c('GET', '/connect/payment')).toMatchObject({ body: { status: 'none' } });

    const checkout = await c('POST', '/connect/checkout', { method: 'card' });
    const secret = checkout.body.client_secret as string;
    const invoice = { id: 'in_forged', object: 'invoice', parent: { subscription_details: { subscription: standin.subscriptionOf(secret).id } }, lines: { data: [{ period: { end: 4_000_000_000 } }] } };
    const post = (body: string, signature?: string) =>
      request(`${base}/payments/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) }, body }).then(async (r) => ({
        status: r.statusCode,
        body: (await r.body.json()) as Body,
      }));
    const forged = JSON.stringify({ id: 'evt_forged', object: 'event', type: 'invoice.paid', data: { object: invoice } });
    expect(await post(forged)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await post(forged, `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    // Signed with another secret, as a stranger would sign it.
    expect(await standin.send('invoice.paid', invoice, { signWith: 'whsec_stranger' })).toBe(400);
    expect(planOf(connectionId)).toBe('free');
    expect(await c('GET', '/connect/payment')).toMatchObject({ body: { status: 'pending' } });

    // A verified event about something else is taken and changes nothing; a redelivery applies once.
    expect(await standin.send('customer.created', { id: 'cus_other', object: 'customer' })).toBe(200);
    expect(await standin.pay(secret)).toBe(200);
    const firstEnd = (await c('GET', '/connect/payment')).body.period_end;
    expect(await standin.pay(secret)).toBe(200);
    expect((await c('GET', '/connect/payment')).body.period_end).toBe(firstEnd);
    expect(recordsOf(connectionId).filter((r) => r.status === 'paid')).toHaveLength(1);

    // Pix not enabled at the processor: BRL offers card only.
    standin.pixAvailable = false;
    if (env.config.payments.provider !== 'stripe') throw new Error('the test runs on the Stripe provider');
    const provider = new StripePayments(clients.pool, clients.producer, env.config.payments.stripe);
    expect(await provider.methods('BRL')).toEqual(['card']);
    const refused = provider.checkout(
      { accountId: asAccountId('acc_nopix'), connectionId: 'con_nopix', method: 'pix', currency: 'BRL', email: 'x@shop.test', name: 'X', locale: 'pt' },
      Date.now(),
    );
    await expect(refused).rejects.toThrow(PaymentRefused);
    await expect(refused).rejects.toMatchObject({ code: 'method_unavailable' });
    standin.pixAvailable = true;
  });
});
