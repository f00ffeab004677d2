import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { Clients } from '../../stack/clients.js';
import { repoRoot } from '../../shared/repo-root.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { listDeadLetters } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const run = promisify(execFile);

/** A broker of this test's own, so stopping it leaves the shared stack alone. */
const BROKER = '127.0.0.1:19092';
const stackDir = path.join(repoRoot, '.stack', 'outage-broker');
const brokerEnv = { ...process.env, GATEWAY_STACK_DIR: stackDir, KAFKA_BROKERS: BROKER };
const stack = (command: 'up' | 'down') => run(process.execPath, [path.join(repoRoot, 'dist', 'stack', 'cli.js'), 'stack', command], { env: brokerEnv });
const OUTAGE_MS = 15_000;
const TO = '+5511988887777';

interface Outcome {
  readonly ref: string;
  readonly key?: string;
  readonly status: number;
  readonly messageId?: string;
}

/**
 * Sends keep coming while the broker is down for 15 s. A 202 means the send goes out once; a 503
 * means it never goes out, even though the producer delivers its command once the broker is back;
 * and a client that retries its 503s, with or without an Idempotency-Key, messages the customer once.
 */
describe('a broker outage', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let account: CreatedAccount;

  const send = async (ref: string, key?: string): Promise<Outcome> => {
    const response = await roles.api!.app.inject({
      method: 'POST',
      url: '/messages/text',
      headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      payload: JSON.stringify({ to: TO, body: `hello ${ref}`, client_reference: ref }),
    });
    const body = response.json<{ message_id?: string; code?: string }>();
    return { ref, key, status: response.statusCode, messageId: body.message_id };
  };

  /** A client that honours 429 `Retry-After` while it retries a 503 (the plan's rate limit holds). */
  const retry = async (o: Outcome): Promise<Outcome> => {
    for (;;) {
      const again = await send(o.ref, o.key);
      if (again.status !== 429) return again;
      await new Promise((resolve) => setTimeout(resolve, 1_000 * (1 + Math.random())));
    }
  };

  beforeAll(async () => {
    await stack('up');
    env = await createTestEnv({ KAFKA_BROKERS: BROKER, PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    account = await createAccount(clients.producer, { name: 'Outage', email: 'ops@outage.test', locale: 'en', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await waitFor('the sandbox number connected', async () => {
      const response = await roles.api!.app.inject({ method: 'GET', url: '/instances', headers: { authorization: `Bearer ${account.api_key}` } });
      const data = response.statusCode === 200 ? response.json<{ data: { status: string }[] }>().data : [];
      return data.length === 1 && data[0]!.status === 'connected';
    }, { timeoutMs: 60_000, intervalMs: 100 });
  }, 300_000);

  afterAll(async () => {
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
    await stack('down');
    rmSync(stackDir, { recursive: true, force: true });
  }, 120_000);

  it('never executes a refused send, executes each accepted one once, and a retry yields one message', async () => {
    const pending: Promise<Outcome>[] = [];
    let n = 0;
    // Every other send carries an Idempotency-Key, so both kinds of retry are exercised.
    const ticker = setInterval(() => {
      n += 1;
      pending.push(send(`r${n}`, n % 2 === 0 ? `key-${env.id}-${n}` : undefined));
    }, 200);
    try {
      await waitFor('sends accepted before the outage', () => n >= 15, { timeoutMs: 10_000 });
      const pid = Number(readFileSync(path.join(stackDir, 'run', 'kafka.pid'), 'utf8'));
      process.kill(pid, 'SIGKILL');
      const downAt = Date.now();
      await waitFor('the outage to last', () => Date.now() - downAt >= OUTAGE_MS, { timeoutMs: OUTAGE_MS + 5_000, intervalMs: 200 });
      await stack('up');
      const upAt = n;
      await waitFor('sends after the broker is back', () => n >= upAt + 15, { timeoutMs: 30_000 });
    } finally {
      clearInterval(ticker);
    }
    const first = await Promise.all(pending);
    expect(first.every((o) => o.status === 202 || o.status === 503), `statuses: ${first.map((o) => o.status).join(',')}`).toBe(true);
    const failed = first.filter((o) => o.status === 503);
    expect(failed.length).toBeGreaterThan(10);
    expect(first.filter((o) => o.status === 202).length).toBeGreaterThan(25);

    // The client retries each 503 once: keyed ones with the same key, the others without one.
    const retries = await Promise.all(failed.map((o) => retry(o)));
    expect(retries.map((o) => o.status)).toEqual(retries.map(() => 202));
    const accepted = [...first.filter((o) => o.status === 202), ...retries];
    console.log(`broker outage: ${first.length} sends, ${first.length - failed.length} accepted, ${failed.length} refused and retried`);

    // Refused commands reach the log once the broker is back (the producer retries them) and are passed
    // over. Then the connector has read the whole send topic: what it executed is final.
    const refusedLetters = async () => (await listDeadLetters(clients, 10_000)).filter((letter) => letter.reason.startsWith('refused')).length;
    await waitFor('every refused command passed over', async () => (await refusedLetters()) >= failed.length, { timeoutMs: 60_000, intervalMs: 500 }).catch(() => undefined);
    await waitFor('the connector at the end of the send topic', async () => {
      const lag = await clients.metrics.registry.getSingleMetric('gateway_consumer_lag')!.get();
      const sends = lag.values.filter((v) => String(v.labels.group).endsWith('connector') && String(v.labels.topic).endsWith('gw.commands.send'));
      return sends.length > 0 && sends.every((v) => v.value === 0);
    }, { timeoutMs: 60_000, intervalMs: 500 });
    const passedOver = await refusedLetters();
    console.log(`broker outage: ${passedOver} refused commands reached the log and were passed over`);
    expect(passedOver).toBeGreaterThan(0);
    expect(passedOver).toBeLessThanOrEqual(failed.length);
    const executed = await waitFor('every accepted send executed', async () => {
      const { rows } = await clients.pool.query<{ message_id: string; client_reference: string }>(
        'SELECT message_id, client_reference FROM connector.executed WHERE wa_message_id IS NOT NULL',
      );
      return rows.length >= accepted.length ? rows : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200 });

    // One executed send per reference, and exactly the accepted message ids.
    expect(executed.length).toBe(accepted.length);
    expect(new Set(executed.map((r) => r.client_reference)).size).toBe(first.length);
    expect(new Set(executed.map((r) => r.message_id))).toEqual(new Set(accepted.map((o) => o.messageId)));

    // The conversation shows the accepted sends only (more than a page of them when the outage ran long).
    type HistoryPage = { data: { message_id: string }[]; next_cursor: string | null };
    const historyPage = async (cursor: string | null): Promise<HistoryPage | undefined> => {
      const response = await roles.api!.app.inject({
        method: 'GET',
        url: `/conversations/${encodeURIComponent(TO)}/messages?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        headers: { authorization: `Bearer ${account.api_key}` },
      });
      return response.statusCode === 200 ? response.json<HistoryPage>() : undefined;
    };
    const historyPages = async (): Promise<{ message_id: string }[]> => {
      const all: { message_id: string }[] = [];
      for (let page = await historyPage(null); page !== undefined; page = page.next_cursor === null ? undefined : await historyPage(page.next_cursor)) {
        all.push(...page.data);
      }
      return all;
    };
    const history = await waitFor('the history of the conversation', async () => {
      const data = await historyPages();
      return data.length >= accepted.length ? data : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    expect(new Set(history.map((m) => m.message_id))).toEqual(new Set(accepted.map((o) => o.messageId)));
  }, 240_000);
});
