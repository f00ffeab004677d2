import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';
import { jsonCaller } from '../support/json-call.js';
import { collectTopic } from '../support/topic-collector.js';

const ORIGIN = 'https://app.partner.test';

/** The shape of a record, without its ids and times: what the writer that made it decides. */
function shapeOf(record: ConfigRecord) {
  const { kind, ...entity }: { kind: string } & Record<string, unknown> = { ...record.entity };
  const fixed = Object.fromEntries(Object.entries(entity).filter(([name]) => !['key_hash', 'prefix', 'name', 'email'].includes(name)));
  return { kind, fields: Object.keys(entity).sort(), fixed, project: record.project_id === null ? null : 'set', instance: record.instance_id };
}

/**
 * `gateway accounts create` and the Connect component's account creation (POST /connect/account)
 * go through the same command writer (processors/config/accounts.ts): the same `gw.config` records.
 */
describe('config commands from the CLI and from the API', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let base: string;
  let config: { values: ConfigRecord[]; consumer: TopicConsumer };
  const call = jsonCaller(() => base);

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1' });
    clients = await testClients(env);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    config = await collectTopic(clients, topics.config, `${env.id}-config-commands`);
  }, 60_000);

  afterAll(async () => {
    await config?.consumer.stop();
    await api?.stop();
    await clients?.close();
    await env?.dispose();
  });

  const recordsOf = (accountId: string) => config.values.filter((r) => r.account_id === accountId).sort((a, b) => a.entity.kind.localeCompare(b.entity.kind));

  it('writes the same account, project, owner and owner key records', async () => {
    const cli = spawnGateway(['accounts', 'create', '--name', 'Shop', '--email', `cli-${env.id}@shop.test`, '--json'], env.env);
    expect(await cli.exited, cli.output()).toBe(0);
    const byCli = (JSON.parse(cli.stdout()) as { account_id: string }).account_id;

    const admin = await createPlatformAdmin(clients.producer, `ops-${env.id}@gateway.test`);
    await api.directory.until(() => api.directory.platformAdmins.has(admin.id), 15_000);
    const registered = await call('POST', '/platform/partners', {
      headers: { authorization: `Bearer ${admin.credential}` },
      body: { name: 'Partner', slug: `p-${env.id}`, allowed_origins: [ORIGIN] },
    });
    expect(registered.status).toBe(201);
    const session = await call('POST', '/partner/connect-sessions', {
      headers: { authorization: `Bearer ${registered.body.partner_secret as string}` },
      body: { external_id: 'shop-1', customer: { name: 'Ana', email: `api-${env.id}@shop.test`, company: 'Shop' } },
    });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const created = await call('POST', '/connect/account', { headers: { 'x-connect-session': session.body.session_token as string, origin: ORIGIN } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const byApi = await waitFor('the account the API created', async () => api.directory.accountOfEmail(`api-${env.id}@shop.test`)?.accountId, { timeoutMs: 15_000 });

    const { cliRecords, apiRecords } = await waitFor('both accounts on gw.config', async () => {
      const [cliRecords, apiRecords] = [recordsOf(byCli), recordsOf(byApi)];
      return cliRecords.length >= 4 && apiRecords.length >= 4 ? { cliRecords, apiRecords } : undefined;
    }, { timeoutMs: 15_000 });
    expect(cliRecords.map((r) => r.entity.kind)).toEqual(['account', 'api_key', 'project', 'user']);
    expect(apiRecords.map(shapeOf)).toEqual(cliRecords.map(shapeOf));
  }, 90_000);
});
