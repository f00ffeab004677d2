import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startConnectorRole, type ConnectorRole } from '../../connectors/network/index.js';
import { banRule } from '../../connectors/sandbox/bans.js';
import { PendingReceipts, SandboxBehaviours, SandboxNetwork } from '../../connectors/sandbox/index.js';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { otpCodes, testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
/** A customer who blocked the number through the behaviour control, and one by the 0404 rule. */
const listedBlocker = '+5511987651111';
const ruleBlocker = '+5511987650404';

interface Message {
  message_id: string;
  status?: string;
  error_code?: string;
}

/**
 * The ban model of the sandbox network, driven through the HTTP API as a customer would: sends to
 * people who blocked the number fail with recipient_blocked until the network bans the number.
 */
describe('sandbox bans, through the API', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let connector: ConnectorRole;
  let sandbox: SandboxNetwork;
  let account: CreatedAccount;

  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const headers = { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' };
    const response = await roles.api!.app.inject({ method, url, headers, payload: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };

  /** The send of `messageId` to `phone`, once the conversation shows it `failed`. */
  const failed = (phone: string, messageId: string) =>
    waitFor(`${messageId} failed`, async () => {
      const { status, body } = await call('GET', `/conversations/${encodeURIComponent(`${phone.slice(1)}@s.whatsapp.net`)}/messages?limit=200`);
      const message = status === 200 ? (body.data as Message[]).find((m) => m.message_id === messageId) : undefined;
      return message?.status === 'failed' ? message : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor'], clients);
    // The connector role of this process, with the sandbox held here so the test can see into it.
    sandbox = new SandboxNetwork({ logger: quiet, receipts: new PendingReceipts(clients.pool), behaviours: new SandboxBehaviours(clients.pool) });
    connector = await startConnectorRole(clients, { connectors: [sandbox], otp: otpCodes(clients) });
    account = await createAccount(clients.producer, { name: 'Blasts', email: 'owner@blasts.test', locale: 'en', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await waitFor('the sandbox number connected', async () => {
      const { status, body } = await call('GET', '/instances');
      const data = status === 200 ? (body.data as Array<{ status: string }>) : [];
      return data.length === 1 && data[0]!.status === 'connected';
    }, { timeoutMs: 60_000, intervalMs: 100 });
  });

  afterAll(async () => {
    await connector?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it(`bans the number on its ${banRule.blocks}th send to recipients who blocked it, and not before`, async () => {
    const { body } = await call('GET', '/instances');
    const id = (body.data as Array<{ id: string }>)[0]!.id;
    const control = await call('POST', `/sandbox/instances/${id}/behaviour`, { block_from: [listedBlocker] });
    expect(control.status, JSON.stringify(control.body)).toBe(202);
    // Controls and sends ride different topics: send once the change shows.
    await waitFor('the block_from behaviour', () => sandbox.inspect(id)?.behaviour.blockFrom.has(listedBlocker));

    for (let i = 1; i <= banRule.blocks; i++) {
      expect(sandbox.inspect(id)?.status, `before send ${i}`).toBe('connected');
      const to = i % 2 === 0 ? listedBlocker : ruleBlocker;
      const sent = await call('POST', '/messages/text', { to, body: `Spring sale ${i}`, instance_id: id });
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      expect(await failed(to, sent.body.message_id as string)).toMatchObject({ error_code: 'recipient_blocked' });
    }

    await waitFor('the sandbox banned the number', () => sandbox.inspect(id)?.status === 'banned', { timeoutMs: 5_000 });
    const banned = await waitFor('the number banned in GET /instances', async () => {
      const { status, body: numbers } = await call('GET', '/instances');
      const number = status === 200 ? (numbers.data as Array<{ id: string; status: string }>).find((n) => n.id === id) : undefined;
      return number?.status === 'banned' ? number : undefined;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    expect(banned).toMatchObject({ status: 'banned' });
  });
});
