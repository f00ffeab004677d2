import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditProjection } from '../../processors/audit/index.js';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { replayProjection } from '../../processors/index.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { canSignIn } from '../support/sign-in.js';

interface Entry {
  readonly id: string;
  readonly action: string;
  readonly target_id: string;
  readonly actor: { readonly kind: string; readonly id: string };
  readonly ip: string;
  readonly user_agent: string | null;
}

/**
 * The audit trail on the real stack: sensitive actions through the API are on `gw.audit` with who,
 * when and from where, listed by `GET /audit` (an account's) and `GET /platform/audit` (the
 * partners'), to owners and admins only, and rebuilt by a replay.
 */
describe('the audit log', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let base: string;
  let shop: CreatedAccount;
  let admin: string;

  async function call(method: string, path: string, auth: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${auth}`, 'user-agent': 'audit-test/1.0', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
  }
  const entries = async (path: string, auth: string) => ((await call('GET', path, auth)).body.data ?? []) as Entry[];

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', SWEEP_INTERVAL_MS: '3600000' });
    clients = await testClients(env);
    roles = await startRoles(['processor'], clients);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    shop = await createAccount(clients.producer, { name: 'Audited', email: `owner-${env.id}@audit.test`, plan: 'pro', sandboxNumbers: 0 }, async () => undefined);
    admin = (await createPlatformAdmin(clients.producer, `ops-${env.id}@audit.test`)).credential;
    await api.directory.until(() => canSignIn(api.directory, shop.account_id) && [...api.directory.platformAdmins.values()].some((a) => a.email === `ops-${env.id}@audit.test`), 15_000);
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it("lists an account's sensitive actions with who, from where and with what, to its admins only", async () => {
    const created = await call('POST', '/keys', shop.api_key, { role: 'agent', scopes: ['instances:read'] });
    expect(created.status).toBe(201);
    const keyId = created.body.id as string;
    expect((await call('POST', `/keys/${keyId}/rotate`, shop.api_key)).status).toBe(201);
    expect((await call('DELETE', `/keys/${keyId}`, shop.api_key)).status).toBe(200);
    const person = await call('POST', '/users', shop.api_key, { email: `ana-${env.id}@audit.test`, role: 'member' });
    expect(person.status).toBe(201);
    // A refused action is no entry.
    expect((await call('DELETE', '/keys/key_nothing', shop.api_key)).status).toBe(404);

    const ownerKeyId = api.directory.keysOf(shop.account_id).find((k) => k.role === 'owner')!.id;
    const listed = await waitFor('the four entries', async () => {
      const found = await entries('/audit', shop.api_key);
      return found.length >= 4 ? found : undefined;
    }, { timeoutMs: 20_000 });
    expect(listed.map((e) => [e.action, e.target_id])).toEqual([
      ['user.added', person.body.id],
      ['key.revoked', keyId],
      ['key.rotated', keyId],
      ['key.created', keyId],
    ]);
    for (const entry of listed) expect(entry).toMatchObject({ actor: { kind: 'api_key', id: ownerKeyId }, ip: '127.0.0.1', user_agent: 'audit-test/1.0' });

    expect(await entries('/audit?action=key.revoked&limit=1', shop.api_key)).toHaveLength(1);
    const agent = await call('POST', '/keys', shop.api_key, { role: 'agent' });
    expect(await call('GET', '/audit', agent.body.api_key as string)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await call('GET', '/audit?action=DROP TABLE', shop.api_key)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    // Nothing of the platform's or of another account.
    expect(listed.every((e) => !e.action.startsWith('partner.'))).toBe(true);
  });

  it("lists the administrators' actions on partners on the platform's log, and a replay rebuilds both", async () => {
    const partner = await call('POST', '/platform/partners', admin, { name: 'Audited Partner', slug: `audited-${env.id}`, allowed_origins: [], key_scopes: ['messages:send'] });
    expect(partner.status).toBe(201);
    const id = partner.body.id as string;
    expect((await call('POST', `/platform/partners/${id}/rotate-secret`, admin)).status).toBe(200);
    expect((await call('POST', `/platform/partners/${id}/deactivate`, admin)).status).toBe(200);
    const mine = async () => (await entries('/platform/audit?limit=200', admin)).filter((e) => e.target_id === id);
    const listed = await waitFor('the two entries', async () => ((await mine()).length >= 2 ? mine() : undefined), { timeoutMs: 20_000 });
    expect(listed.map((e) => e.action)).toEqual(['partner.deactivated', 'partner.secret_rotated']);
    expect(listed[0]).toMatchObject({ actor: { kind: 'platform_admin', id: `ops-${env.id}@audit.test` }, ip: '127.0.0.1' });
    expect(await call('GET', '/platform/audit', shop.api_key)).toMatchObject({ status: 403 });

    const before = { account: await entries('/audit?limit=200', shop.api_key), platform: await mine() };
    await replayProjection(clients, auditProjection, { deadlineMs: 120_000 });
    expect({ account: await entries('/audit?limit=200', shop.api_key), platform: await mine() }).toEqual(before);
  });
});
