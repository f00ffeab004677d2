import { createServer } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../api/accounts/create.js';
import { SandboxPayments } from '../../connectors/payments/sandbox.js';
import { waitUntilCaughtUp } from '../../processors/index.js';
import { startDirectory, type RunningDirectory } from '../../processors/directory.js';
import { asEventId, type AccountId } from '../../schemas/ids.js';
import type { PaymentRecord } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { topicName, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { jsonCaller } from '../support/json-call.js';
import { readMailbox } from '../support/mailbox.js';
import { collectTopic } from '../support/topic-collector.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

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
  let records: { values: PaymentRecord[]; consumer: TopicConsumer };
  let port: number;
  let account: CreatedAccount;
  const running: GatewayProcess[] = [];
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
    records = await collectTopic(clients, topics.payments, `${env.id}.test.payments`);
    port = await freePort();
  }, 60_000);

  afterAll(async () => {
    for (const gateway of running) gateway.kill('SIGKILL');
    await records?.consumer.stop();
    await directory?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('SIGKILL between the confirmation and its effect: the processor started later makes the account Pro', async () => {
    // The API alone: no processor applies what it writes.
    const first = await spawnUp('api');
    account = await createAccount(clients.producer, { name: 'Killed', email: `killed-${env.id}@shop.test`, plan: 'free' }, async () => undefined);
    await directory.directory.until(() => planOf(account.account_id) === 'free', 15_000);
    const checkout = await new SandboxPayments(clients.pool, clients.producer).checkout(
      { accountId: account.account_id as AccountId, connectionId: 'con_none', method: 'card', currency: 'BRL', email: `killed-${env.id}@shop.test`, name: 'Ana', locale: 'pt' },
      Date.now(),
    );

    // The route writes the record, then waits for an effect that no process applies: killed meanwhile.
    const answer = call('POST', '/sandbox/payments/confirm', { body: { client_secret: checkout.client_secret, outcome: 'paid' } }).then(
      (response) => response.status,
      () => 'no answer',
    );
    const paid = await waitFor('the paid record on gw.payments', () => records.values.find((r) => r.account_id === account.account_id && r.status === 'paid'), {
      timeoutMs: 15_000,
      intervalMs: 5,
    });
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(await answer, 'the API was killed before it answered').toBe('no answer');
    expect(paid).toMatchObject({ email: `killed-${env.id}@shop.test`, locale: 'pt', pay_url: null });
    expect(planOf(account.account_id)).toBe('free');

    await spawnUp('api,processor');
    await directory.directory.until(() => planOf(account.account_id) === 'pro', 30_000);
    const subscription = await waitFor('the subscription projected', async () => {
      const read = await owner('GET', '/me/subscription');
      return (read.body.payment as { status?: string } | null)?.status === 'paid' ? read.body : undefined;
    }, { timeoutMs: 30_000 });
    expect(subscription).toMatchObject({
      plan: 'pro',
      status: 'active',
      payment: { attempt_id: checkout.attempt_id, provider: 'sandbox', method: 'card', status: 'paid', renewals: 0, period_end: new Date(paid.period_end!).toISOString() },
      latest_attempt: { attempt_id: checkout.attempt_id, status: 'paid' },
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
