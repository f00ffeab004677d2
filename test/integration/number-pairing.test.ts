import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { jsonCaller, type JsonBody } from '../support/json-call.js';
import { NetworkServer } from '../support/network-server.js';
import { openEventStream } from '../support/sse-reader.js';

/**
 * Pairing and unlinking a number through the public API, whatever network runs it: a sandbox
 * number shows its QR on GET /stream and connects when the sandbox phone scans it; a Baileys
 * number's session (in the connector role, through Kafka) connects to the network to pair, here
 * a local WebSocket server, and lets go when it is unlinked.
 */
describe('pairing numbers through POST /instances/{id}/connect and /disconnect', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let server: NetworkServer;
  let account: CreatedAccount;
  let base: string;
  const http = jsonCaller(() => base);
  const call = (method: string, path: string, body?: unknown) => http(method, path, { headers: { authorization: `Bearer ${account.api_key}` }, body });
  const numberOf = async (id: string) => ((await call('GET', '/instances')).body.data as JsonBody[]).find((n) => n.id === id);

  beforeAll(async () => {
    server = await NetworkServer.start();
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1', BAILEYS_WS_URL: server.template(), BAILEYS_LEASE_RENEW_MS: '300', BAILEYS_CONNECT_TIMEOUT_MS: '600000' });
    clients = await testClients(env);
    roles = await startRoles(['api', 'processor', 'connector'], clients);
    base = `http://127.0.0.1:${(roles.api!.app.server.address() as AddressInfo).port}`;
    account = await createAccount(clients.producer, { name: 'Pairs', email: 'owner@pairs.test', plan: 'pro' }, connectSandboxNumbers(clients.producer));
    await roles.api!.directory.until(() => roles.api!.directory.accounts.has(account.account_id), 15_000);
  });

  afterAll(async () => {
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
    await server?.close();
  });

  it('pairs a sandbox number: its QR on /stream, the sandbox phone scans it, the number connects; then unlinks it', async () => {
    const created = await call('POST', '/instances', { nickname: 'Loja' });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    const stream = await openEventStream(`${base}/stream`, { authorization: `Bearer ${account.api_key}` });
    try {
      expect(await call('POST', `/instances/${id}/connect`, {})).toMatchObject({ status: 202, body: { id, accepted: true } });
      const qr = await waitFor('qr_code on /stream', async () => stream.events.find((e) => e.event === 'qr_code' && (e.data.payload as JsonBody).instance_id === id), { timeoutMs: 20_000 });
      const scanned = await http('POST', '/sandbox/phone/scan', { body: { qr_code: (qr.data.payload as JsonBody).qr_code, phone: '+5511955554444' } });
      expect(scanned.status).toBe(202);
    } finally {
      stream.close();
    }
    await waitFor('connected', async () => (await numberOf(id))?.status === 'connected' || undefined, { timeoutMs: 20_000 });
    expect(await numberOf(id)).toMatchObject({ phone: '+5511955554444', connector: 'sandbox' });
    expect(await call('POST', `/instances/${id}/disconnect`)).toMatchObject({ status: 202 });
    await waitFor('disconnected', async () => (await numberOf(id))?.status === 'disconnected' || undefined, { timeoutMs: 20_000 });
  });

  it('pairs a Baileys number through its session in the connector role, and unlinks it', async () => {
    const created = await call('POST', '/instances', { nickname: 'Real', connector: 'baileys' });
    const id = created.body.id as string;
    expect(await numberOf(id)).toMatchObject({ connector: 'baileys', status: 'pending' });
    // A pairing code is typed on the phone of the number: without its phone there is nothing to ask for.
    expect(await call('POST', `/instances/${id}/connect`, { method: 'code' })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    // Nor with a phone no country gives out.
    expect(await call('POST', `/instances/${id}/connect`, { method: 'code', phone: '+1 555 000 1111' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', message: expect.stringContaining('body/phone: invalid_for_region') as unknown },
    });
    expect(server.attemptsOf(id)).toEqual([]);

    expect(await call('POST', `/instances/${id}/connect`, { method: 'qr' })).toMatchObject({ status: 202 });
    await waitFor('the session on the network', async () => server.openOf(id).length === 1 || undefined, { timeoutMs: 30_000 });
    await waitFor('connecting', async () => (await numberOf(id))?.status === 'connecting' || undefined, { timeoutMs: 20_000 });

    expect(await call('POST', `/instances/${id}/disconnect`)).toMatchObject({ status: 202 });
    await waitFor('the socket closed', async () => server.openOf(id).length === 0 || undefined, { timeoutMs: 20_000 });
    await waitFor('disconnected', async () => (await numberOf(id))?.status === 'disconnected' || undefined, { timeoutMs: 20_000 });
    expect(server.connections.filter((c) => c.number === id)).toHaveLength(1);
  });

  it('takes a Baileys number back after its lease renewal stalled, and pairs it again on POST connect without a restart', async () => {
    const id = (await call('POST', '/instances', { nickname: 'Stalled', connector: 'baileys' })).body.id as string;
    expect(await call('POST', `/instances/${id}/connect`, { method: 'qr' })).toMatchObject({ status: 202 });
    await waitFor('the session on the network', async () => server.openOf(id).length === 1 || undefined, { timeoutMs: 30_000 });
    // Another connection holds the lease row: every renewal waits on it, then gives up.
    const locker = await clients.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM baileys.leases WHERE instance_id = $1 FOR UPDATE`, [id]);
      await waitFor('disconnected', async () => (await numberOf(id))?.status === 'disconnected' || undefined, { timeoutMs: 20_000 });
      expect(server.openOf(id)).toHaveLength(0);
      await locker.query('ROLLBACK');
    } finally {
      locker.release();
    }
    await waitFor('the number taken back', async () => server.openOf(id).length === 1 || undefined, { timeoutMs: 20_000 });
    const before = server.attemptsOf(id).length;
    expect(await call('POST', `/instances/${id}/connect`, { method: 'qr' })).toMatchObject({ status: 202 });
    await waitFor('connecting', async () => (await numberOf(id))?.status === 'connecting' || undefined, { timeoutMs: 20_000 });
    await waitFor('a new pairing socket', async () => (server.attemptsOf(id).length > before && server.openOf(id).length === 1) || undefined, { timeoutMs: 20_000 });
  });

  it('answers 404 for a number of no project of the key, and 400 for a bad body', async () => {
    expect(await call('POST', '/instances/inst_nobody/connect', {})).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('POST', '/instances/inst_nobody/disconnect')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    const created = await call('POST', '/instances', {});
    const id = created.body.id as string;
    expect((await call('POST', `/instances/${id}/connect`, { method: 'telepathy' })).status).toBe(400);
    expect((await call('POST', `/instances/${id}/connect`, { phone: '11999' })).status).toBe(400);
  });
});
