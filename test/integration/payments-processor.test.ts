import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { waitUntilCaughtUp } from '../../processors/index.js';
import { startDirectory, type RunningDirectory } from '../../processors/directory.js';
import { startConnectionsView, type ConnectionsView } from '../../processors/connections/view.js';
import type { RunningView } from '../../processors/runtime/followed-view.js';
import { asEventId, newId, type PartnerId } from '../../schemas/ids.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import type { PaymentRecord } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { topicName, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { freePort, spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { jsonCaller } from '../support/json-call.js';
import { readMailbox } from '../support/mailbox.js';
import { partnerRecord } from '../support/partner-records.js';
import { collectTopic } from '../support/topic-collector.js';

const ORIGIN = 'https://app.partner.example';


/**
 * Issue 19: a payment's effect is the payments processor's, applied from its record on
 * `gw.payments`. The API is killed after the confirmation's record is on the log and before any
 * effect; the processor started afterwards makes the account Pro, a record delivered twice has
 * one effect (one e-mail), and `gateway replay payments` rebuilds the subscription as it was.
 */
describe('payments processor: the effect of a payment outlives the API that took it', () => {
  let env: TestEnv;
  let clients: Clients;
  let directory: RunningDirectory;
  let connections: RunningView<ConnectionsView>;
  let records: { values: PaymentRecord[]; consumer: TopicConsumer };
  let port: number;
  let account: CreatedAccount;
  const running: GatewayProcess[] = [];
  const partnerId = newId('ptn') as PartnerId;
  const partnerSecret = secretToken('svc_partner_');
  const call = jsonCaller(() => `http://127.0.0.1:${port}`);
  const owner = (method: string, path: string) => call(method, path, { headers: { authorization: `Bearer ${account.api_key}` } });
  const planOf = (accountId: string) => directory.directory.accounts.get(accountId)?.plan;
  const paymentsTopic = () => topicName(topics.payments, clients.serdes.prefix);

  async function spawnUp(roles: string): Promise<GatewayProcess> {
    const gateway = spawnGateway([roles], { ...env.env, PORT: String(port) });
    running.push(gateway);
    await waitFor(`gateway ${roles} up`, async () => {
      gateway.assertRunning();
      return (await request(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.statusCode === 200 || undefined;
    }, { timeoutMs: 60_000 });
    return gateway;
  }

  async function subscriptionRows(): Promise<unknown[]> {
    const subscriptions = await clients.pool.query<Record<string, unknown>>('SELECT * FROM payments.subscriptions ORDER BY account_id');
    const attempts = await clients.pool.query<Record<string, unknown>>('SELECT * FROM payments.attempts ORDER BY attempt_id');
    return [...subscriptions.rows, ...attempts.rows];
  }

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    directory = await startDirectory(clients);
    connections = await startConnectionsView(clients);
    records = await collectTopic(clients, topics.payments, `${env.id}.test.payments`);
    port = await freePort();
  }, 60_000);

  afterAll(async () => {
    for (const gateway of running) gateway.kill('SIGKILL');
    await records?.consumer.stop();
    await connections?.stop();
    await directory?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('SIGKILL between the confirmation and its effect: the processor started later makes the account Pro and moves its connection on', async () => {
    // The API alone: no processor applies what it writes.
    const first = await spawnUp('api');
    const email = `killed-${env.id}@shop.test`;
    account = await createAccount(clients.producer, { name: 'Killed', email, plan: 'free' }, async () => undefined);
    const partnerConfig = partnerRecord(partnerId, { secret_hash: hashSecret(partnerSecret), allowed_origins: [ORIGIN] });
    await clients.producer.send(topics.config, [{ key: partnerConfig.entity_id, value: partnerConfig }]);
    await directory.directory.applied(partnerConfig.entity_id, partnerConfig.event_id, 15_000);
    const opened = await waitFor('the session opened', async () => {
      const session = await call('POST', '/partner/connect-sessions', {
        headers: { authorization: `Bearer ${partnerSecret}` },
        body: { external_id: 'cus-killed', customer: { name: 'Ana', email, country: 'BR', locale: 'pt-BR' } },
      });
      return session.status === 201 ? session.body : undefined;
    }, { timeoutMs: 15_000 });
    const c = (method: string, path: string, body?: unknown) =>
      call(method, path, { headers: { 'x-connect-session': opened.session_token as string, origin: ORIGIN }, body });
    const connectionId = (opened.connection as { id: string }).id;
    expect(await c('POST', '/connect/account')).toMatchObject({ status: 200, body: { step: 'verify_email' } });
    const mail = await waitFor('the code', async () => (await readMailbox(email))[0], { timeoutMs: 20_000 });
    expect(await c('POST', '/connect/account/verify', { code: /\b(\d{6})\b/.exec(mail.text)![1] })).toMatchObject({ status: 200, body: { step: 'payment' } });
    const checkout = await c('POST', '/connect/checkout', { method: 'card' });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);

    // The route writes the record, then waits for an effect that no process applies: killed meanwhile.
    const answer = call('POST', '/sandbox/payments/confirm', { body: { client_secret: checkout.body.client_secret, outcome: 'paid' } }).then(
      (response) => response.status,
      () => 'no answer',
    );
    const paid = await waitFor('the paid record on gw.payments', () => records.values.find((r) => r.account_id === account.account_id && r.status === 'paid'), {
      timeoutMs: 15_000,
      intervalMs: 5,
    });
    // Paid at the provider, not Pro yet: the component keeps polling.
    const polled = await waitFor('the attempt paid', async () => {
      const payment = await c('GET', '/connect/payment');
      return payment.body.status === 'pending' ? undefined : payment.body;
    }, { timeoutMs: 5_000, intervalMs: 5 });
    expect(polled).toMatchObject({ status: 'processing', step: 'payment' });
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(await answer, 'the API was killed before it answered').toBe('no answer');
    expect(paid).toMatchObject({ email, locale: 'pt', pay_url: null, connection_id: connectionId });
    expect(planOf(account.account_id)).toBe('free');

    await spawnUp('api,processor');
    await directory.directory.until(() => planOf(account.account_id) === 'pro', 30_000);
    // Moved by the processor, not by a poll of the component (which would move it too).
    await connections.view.until(() => connections.view.get(connectionId)?.to_status === 'pending_number', 15_000);
    expect((await waitFor('the component on the number step', async () => {
      const payment = await c('GET', '/connect/payment');
      return payment.body.status === 'paid' ? payment.body : undefined;
    }, { timeoutMs: 15_000 }))).toMatchObject({ status: 'paid', step: 'number' });
    const subscription = await waitFor('the subscription projected', async () => {
      const read = await owner('GET', '/me/subscription');
      return (read.body.payment as { status?: string } | null)?.status === 'paid' ? read.body : undefined;
    }, { timeoutMs: 30_000 });
    expect(subscription).toMatchObject({
      plan: 'pro',
      status: 'active',
      payment: { attempt_id: checkout.body.attempt_id, provider: 'sandbox', method: 'card', status: 'paid', renewals: 0, period_end: new Date(paid.period_end!).toISOString() },
      latest_attempt: { attempt_id: checkout.body.attempt_id, status: 'paid' },
    });
  });

  it('applies a record delivered twice once: one renewal e-mail, one renewal counted', async () => {
    const email = `twice-${env.id}@shop.test`;
    const paid = records.values.find((r) => r.account_id === account.account_id && r.status === 'paid')!;
    const due: PaymentRecord = { ...paid, event_id: asEventId(`pmt_evt_due_${env.id}`), status: 'pending', reason: 'renewal sent for payment by e-mail', pay_url: 'https://pay.example/i/1', email };
    const renewal: PaymentRecord = { ...paid, event_id: asEventId(`pmt_evt_renewal_${env.id}`), period_end: paid.period_end! + 30 * 86_400_000 };
    for (const record of [due, due, renewal, renewal]) await clients.producer.send(topics.payments, [{ key: record.account_id, value: record }]);
    await waitUntilCaughtUp(clients, 'payment_effects', [paymentsTopic()], Date.now() + 30_000);
    await waitUntilCaughtUp(clients, 'payments', [paymentsTopic()], Date.now() + 30_000);

    const mails = await waitFor('the renewal e-mail', async () => {
      const received = await readMailbox(email);
      return received.length > 0 ? received : undefined;
    }, { timeoutMs: 20_000 });
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ subject: 'Renove seu plano Pro' });
    expect(mails[0]!.text).toContain('https://pay.example/i/1');
    const { rows } = await clients.pool.query<{ event_id: string }>('SELECT event_id FROM payment_effects.applied WHERE event_id = ANY($1)', [[due.event_id, renewal.event_id]]);
    expect(rows).toHaveLength(2);
    expect((await owner('GET', '/me/subscription')).body).toMatchObject({
      plan: 'pro',
      payment: { status: 'paid', renewals: 1, renewal_due_at: null, period_end: new Date(renewal.period_end!).toISOString() },
    });
  });

  it('replay payments rebuilds the subscriptions equal to the live projection', async () => {
    const before = await subscriptionRows();
    expect(before.length).toBeGreaterThan(1);
    const replay = spawnGateway(['replay', 'payments'], env.env);
    running.push(replay);
    expect(await replay.exited, replay.output()).toBe(0);
    expect(JSON.parse(replay.stdout().trim().split('\n').pop()!)).toMatchObject({ projection: 'payments' });
    expect(await subscriptionRows()).toEqual(before);
    expect(planOf(account.account_id)).toBe('pro');
  });
});
