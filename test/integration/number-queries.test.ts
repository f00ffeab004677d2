import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { NumberAsker, QueryRefused } from '../../connectors/network/index.js';
import { asAccountId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

/**
 * The query channel through the real roles: the API writes a question for a number on
 * `gw.commands.queries`, the connector worker owning the number asks its session and answers on
 * `gw.numbers.replies`. `POST /contacts/check` is its first user.
 */
describe('number queries: the API asks a number through the connector role', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let shop: CreatedAccount;
  let idle: CreatedAccount;

  const call = async (account: CreatedAccount, body: unknown) => {
    const response = await roles.api!.app.inject({
      method: 'POST',
      url: '/contacts/check',
      headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
  };

  const connected = (instanceId: string) => async () => {
    const { rows } = await clients.pool.query<{ status: string }>('SELECT status FROM instances.numbers WHERE instance_id = $1', [instanceId]);
    return rows[0]?.status === 'connected' || undefined;
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    shop = await createAccount(clients.producer, { name: 'Shop', email: 'owner@shop.test', plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    // A number that was never paired: nothing of the project can ask the network.
    idle = await createAccount(clients.producer, { name: 'Idle', email: 'owner@idle.test', plan: 'pro', sandboxNumbers: 1 }, async () => undefined);
    await waitFor('the shop number connected', connected(shop.instance_ids[0]!), { timeoutMs: 90_000 });
    await roles.api!.directory.until(() => canSignIn(roles.api!.directory, idle.account_id), 30_000);
  });

  afterAll(async () => {
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('answers POST /contacts/check from a connected number of the project, the sandbox by its rule', async () => {
    const { status, body } = await call(shop, { phones: ['+5511988887777', '+5511900009999', '98765@lid'] });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({
      data: [
        { phone: '+5511988887777', on_network: true, jid: '5511988887777@s.whatsapp.net' },
        { phone: '+5511900009999', on_network: false, jid: null },
        { phone: '98765@lid', on_network: true, jid: '98765@lid', lid: '98765@lid' },
      ],
    });
    // Answered again from the cache, with a phone not asked before sent to the number alone.
    const again = await call(shop, { phones: ['+5511900009999', '+5511977776666'] });
    expect(again.body).toEqual({
      data: [
        { phone: '+5511900009999', on_network: false, jid: null },
        { phone: '+5511977776666', on_network: true, jid: '5511977776666@s.whatsapp.net' },
      ],
    });
  });

  it('answers 409 not_connected when no number of the project is connected', async () => {
    const { status, body } = await call(idle, { phones: ['+5511988887777'] });
    expect(status).toBe(409);
    expect(body).toMatchObject({ code: 'not_connected' });
  });

  it('hears not_connected from the connector for a number without a session, and gives up on time when no connector answers', async () => {
    const asker = await NumberAsker.start(clients);
    try {
      const idleNumber = { account_id: asAccountId(idle.account_id), project_id: asProjectId(idle.project_id), instance_id: asInstanceId(idle.instance_ids[0]!) };
      const refused = await asker.ask(idleNumber, { kind: 'check_phones', phones: ['+5511988887777'] }, 10_000).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(QueryRefused);
      expect(refused).toMatchObject({ code: 'not_connected' });

      // A number no worker owns (its state was never written): the connector holds the query until its deadline.
      const nobody = { ...idleNumber, instance_id: asInstanceId('inst_nobody') };
      const started = Date.now();
      const timedOut = await asker.ask(nobody, { kind: 'check_phones', phones: ['+5511988887777'] }, 1_500).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(['service_unavailable', 'not_connected']).toContain((timedOut as QueryRefused).code);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await asker.stop();
    }
  });
});
