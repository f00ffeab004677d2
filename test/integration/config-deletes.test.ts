import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { accountRemoval } from '../../processors/config/removal.js';
import { startSweeper } from '../../processors/connections/sweeper.js';
import { startDirectory } from '../../processors/directory.js';
import { instancesProjection, replayProjection, runProjection, type RunningProjection } from '../../processors/index.js';
import { createInstance } from '../../processors/instances/create.js';
import { asAccountId, asProjectId, type ProjectId } from '../../schemas/ids.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { endOffsets, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { jsonCaller } from '../support/json-call.js';
import { canSignIn } from '../support/sign-in.js';

/**
 * Deletions of users, projects, webhooks, pools and accounts are records on the log, written by
 * the command writers of processors/config: a directory read afresh from `gw.config` and a
 * replayed instances projection hold none of what was deleted, and a deletion whose process died
 * before removing the numbers still has them removed, by the sweeper.
 */
describe('deletions through the log', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let instances: RunningProjection | undefined;
  let base: string;
  const call = jsonCaller(() => base);

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1' });
    clients = await testClients(env);
    instances = await runProjection(clients, instancesProjection);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    await instances?.stop();
    await clients?.close();
    await env?.dispose();
  });

  const newAccount = async (name: string) => {
    const account = await createAccount(clients.producer, { name, email: `${name}-${env.id}@shop.test` }, async () => undefined);
    // Its records are keyed by entity, so the key may be read before the account: a key signs in once both are.
    await api.directory.until(() => canSignIn(api.directory, account.account_id), 15_000);
    return account;
  };
  const as = (account: CreatedAccount) => (method: string, path: string, body?: unknown) => call(method, path, { headers: { authorization: `Bearer ${account.api_key}` }, body });
  const numberIn = async (account: CreatedAccount, projectId: string) =>
    (await createInstance(clients.producer, { accountId: asAccountId(account.account_id), projectId: asProjectId(projectId), nickname: null, connector: 'sandbox' })).instance_id;
  const numbersOf = async (projectIds: readonly string[]) =>
    (await clients.pool.query<{ instance_id: string }>('SELECT instance_id FROM instances.numbers WHERE project_id = ANY($1) ORDER BY instance_id', [projectIds])).rows.map((r) => r.instance_id);
  /** A directory built from `gw.config` alone, as every process builds it at start. */
  const replayedDirectory = async () => {
    const fresh = await startDirectory(clients);
    await fresh.directory.reached(await endOffsets(clients.kafka, topicName(topics.config, clients.serdes.prefix)), 15_000);
    await fresh.stop();
    return fresh.directory;
  };

  it('leaves deleted users, webhooks, pools, projects and accounts deleted in a directory read afresh and in a replayed instances projection', async () => {
    const shop = await newAccount('shop');
    const call = as(shop);
    const user = await call('POST', '/users', { email: `staff-${env.id}@shop.test`, role: 'member' });
    const webhook = await call('POST', '/webhooks', { url: 'https://hooks.example.com/', event_types: ['message.sent'] });
    const pool = await call('POST', '/pools', { name: 'Front desk', instance_ids: [] });
    const second = await call('POST', '/projects', { name: 'Second store' });
    for (const created of [user, webhook, pool, second]) expect(created.status, JSON.stringify(created.body)).toBe(201);
    const secondId = second.body.id as string;
    const kept = await numberIn(shop, shop.project_id);
    const dropped = await numberIn(shop, secondId);
    await waitFor('both numbers projected', async () => (await numbersOf([shop.project_id, secondId])).length === 2 || undefined, { timeoutMs: 15_000 });

    for (const path of [`/users/${user.body.id as string}`, `/webhooks/${webhook.body.id as string}`, `/pools/${pool.body.id as string}`, `/projects/${secondId}`]) {
      expect(await call('DELETE', path), path).toMatchObject({ status: 204 });
      expect(await call('DELETE', path), `${path} again`).toMatchObject({ status: 404, body: { code: 'not_found' } });
    }
    const afterDeletes = await replayedDirectory();
    expect(afterDeletes.accounts.has(shop.account_id)).toBe(true);
    expect(afterDeletes.projects.has(shop.project_id)).toBe(true);
    expect(afterDeletes.users.has(user.body.id as string)).toBe(false);
    expect(afterDeletes.webhooks.has(webhook.body.id as string)).toBe(false);
    expect(afterDeletes.pools.has(pool.body.id as string)).toBe(false);
    expect(afterDeletes.projects.has(secondId)).toBe(false);
    await replayProjection(clients, instancesProjection, { deadlineMs: 60_000 });
    expect(await numbersOf([shop.project_id, secondId])).toEqual([kept]);
    expect(dropped).not.toBe(kept);

    expect(await call('DELETE', '/account')).toMatchObject({ status: 204 });
    const afterAccount = await replayedDirectory();
    expect(afterAccount.accounts.has(shop.account_id)).toBe(false);
    expect(afterAccount.projects.has(shop.project_id)).toBe(false);
    expect(afterAccount.usersOf(shop.account_id)).toEqual([]);
    expect(afterAccount.keysOf(shop.account_id)).toEqual([]);
    await replayProjection(clients, instancesProjection, { deadlineMs: 60_000 });
    expect(await numbersOf([shop.project_id])).toEqual([]);
  }, 120_000);

  it("removes the numbers of an account deleted by a process that died before removing them: the sweeper's work", async () => {
    const shop = await newAccount('crashed');
    const second = await as(shop)('POST', '/projects', { name: 'Second store' });
    expect(second.status).toBe(201);
    const projects = [shop.project_id, second.body.id as ProjectId];
    for (const projectId of projects) await numberIn(shop, projectId);
    await waitFor('the numbers projected', async () => (await numbersOf(projects)).length === 2 || undefined, { timeoutMs: 15_000 });

    // The deletion's records, written as `removeAccount` writes them, without the API and without what follows them.
    const changes = accountRemoval(api.directory, asAccountId(shop.account_id), Date.now());
    await clients.producer.send(topics.config, changes);
    await api.directory.until(() => !api.directory.accounts.has(shop.account_id), 15_000);
    expect(await numbersOf(projects)).toHaveLength(2);

    const sweeper = await startSweeper(clients, { intervalMs: 200 });
    try {
      await waitFor('the numbers removed', async () => (await numbersOf(projects)).length === 0 || undefined, { timeoutMs: 20_000 });
    } finally {
      await sweeper.stop();
    }
  }, 90_000);
});
