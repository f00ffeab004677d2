import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../api/accounts/create.js';
import { connectSandboxNumbers } from '../../api/accounts/sandbox.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

/**
 * The routes that act through a number's live session (`/presence`, `/calls`, `/chats`, `/labels`),
 * end to end on the sandbox: API → `gw.commands.queries` → the connector's session → its answer.
 */
describe('live number routes through the API on the sandbox', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let shop: CreatedAccount;
  let idle: CreatedAccount;
  let number: string;

  const call = async (account: CreatedAccount, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => {
    const response = await roles.api!.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${account.api_key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };

  const customerWrites = (from: string, text: string) => call(shop, 'POST', `/sandbox/instances/${number}/customer-messages`, { from, content: { type: 'text', body: text } });

  const connected = (instanceId: string) => async () => {
    const { rows } = await clients.pool.query<{ status: string }>('SELECT status FROM instances.numbers WHERE instance_id = $1', [instanceId]);
    return rows[0]?.status === 'connected' || undefined;
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'owner@shop.test', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    idle = await createAccount(clients.producer, { name: 'Idle', email: 'owner@idle.test', plan: 'pro', sandboxNumbers: 1 }, async () => undefined);
    number = shop.instance_ids[0]!;
    await waitFor('the shop number connected', connected(number), { timeoutMs: 90_000 });
    await roles.api!.directory.until(() => roles.api!.directory.keysOf(idle.account_id).length > 0, 30_000);
  });

  afterAll(async () => {
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  describe('/presence', () => {
    it('shows the number online and typing in a chat', async () => {
      expect(await call(shop, 'POST', '/presence', { instance_id: number, presence: 'available' })).toEqual({
        status: 200,
        body: { instance_id: number, presence: 'available', to: null },
      });
      expect(await call(shop, 'POST', '/presence', { instance_id: number, presence: 'composing', to: '+5511988887777' })).toEqual({
        status: 200,
        body: { instance_id: number, presence: 'composing', to: '5511988887777@s.whatsapp.net' },
      });
    });

    it("reads a contact's presence: online after writing, unknown when never heard of", async () => {
      await customerWrites('+5511988886666', 'hello');
      await waitFor('the customer seen online', async () => {
        const { body } = await call(shop, 'GET', `/presence/+5511988886666?instance_id=${number}`);
        return body.presence === 'available' || undefined;
      });
      const { status, body } = await call(shop, 'GET', `/presence/5511977770000@s.whatsapp.net?instance_id=${number}`);
      expect(status).toBe(200);
      expect(body).toEqual({ instance_id: number, jid: '5511977770000@s.whatsapp.net', presence: 'unknown', last_seen: null, heard_at: null });
    });

    it('refuses bad inputs with a code', async () => {
      const cases: [unknown, number, string][] = [
        [{ instance_id: number, presence: 'composing' }, 400, 'invalid_request'],
        [{ instance_id: number, presence: 'available', to: '+5511988887777' }, 400, 'invalid_request'],
        [{ instance_id: number, presence: 'dancing' }, 400, 'invalid_request'],
        [{ instance_id: number, presence: 'paused', to: 'not-a-phone' }, 400, 'invalid_request'],
        [{ presence: 'available' }, 400, 'invalid_request'],
        [{ instance_id: 'inst_elsewhere', presence: 'available' }, 404, 'not_found'],
      ];
      for (const [body, status, code] of cases) {
        const answer = await call(shop, 'POST', '/presence', body);
        expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([status, code]);
      }
      const notConnected = await call(idle, 'POST', '/presence', { instance_id: idle.instance_ids[0], presence: 'available' });
      expect([notConnected.status, notConnected.body.code]).toEqual([409, 'not_connected']);
      const noNumber = await call(shop, 'GET', '/presence/+5511988887777');
      expect([noNumber.status, noNumber.body.code]).toEqual([400, 'invalid_request']);
    });
  });
});
