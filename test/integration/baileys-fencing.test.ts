import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baileysDdl } from '../../connectors/baileys/tables.js';
import { runDdl } from '../../shared/ddl.js';
import type { Clients } from '../../stack/clients.js';
import { topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { pairedBaileysNumber } from '../support/baileys-numbers.js';
import { NetworkServer, type Connection } from '../support/network-server.js';

const NUMBERS = 12;

/**
 * Two connector processes and a rebalance, then a SIGKILL (issue 12 item 2): the local network
 * server records every socket of every number with its open and close times, and no number ever
 * has two at once; at the end each number has exactly one, so none was lost.
 */
describe('one live socket per number across connector processes', () => {
  let env: TestEnv;
  let clients: Clients;
  let server: NetworkServer;
  const processes: GatewayProcess[] = [];
  const ids = Array.from({ length: NUMBERS }, (_, i) => `inst_fence${i}_${Date.now().toString(36)}`);

  const connector = () => {
    const child = spawnGateway(['connector'], env.env);
    processes.push(child);
    return child;
  };
  const openCount = () => ids.filter((id) => server.openOf(id).length === 1).length;
  const owners = async () => (await clients.pool.query<{ owner: string }>(`SELECT DISTINCT owner FROM baileys.leases WHERE expires_at > now()`)).rows.map((r) => r.owner);
  const overlapping = (sockets: Connection[]) =>
    sockets.some((a, i) => sockets.slice(i + 1).some((b) => a.openedAt < (b.closedAt ?? Infinity) && b.openedAt < (a.closedAt ?? Infinity)));

  beforeAll(async () => {
    server = await NetworkServer.start();
    env = await createTestEnv({
      BAILEYS_WS_URL: server.template(),
      BAILEYS_LEASE_RENEW_MS: '300',
      BAILEYS_CONNECT_TIMEOUT_MS: '600000',
      LOG_LEVEL: 'info',
    });
    clients = await testClients(env);
    await runDdl(clients.pool, 'baileys', baileysDdl);
    for (const id of ids) {
      const state = await pairedBaileysNumber(clients.pool, id, { account: 'acc_fence', project: 'prj_fence' });
      await clients.producer.send(topics.instances, [{ key: id, value: state }]);
    }
  });

  afterAll(async () => {
    for (const child of processes) child.kill('SIGKILL');
    await Promise.all(processes.map((child) => child.exited));
    await clients?.close();
    await env?.dispose();
    await server?.close();
  });

  it('moves sockets between two processes on a rebalance and after a SIGKILL, never two at once, none lost', async () => {
    const a = connector();
    await waitFor('every number connected by A', async () => (a.assertRunning(), openCount() === NUMBERS || undefined), { timeoutMs: 60_000 });

    const b = connector();
    await waitFor('the numbers shared by A and B', async () => {
      a.assertRunning();
      b.assertRunning();
      return ((await owners()).length === 2 && openCount() === NUMBERS) || undefined;
    }, { timeoutMs: 90_000 });
    const moved = ids.filter((id) => server.connections.filter((c) => c.number === id).length > 1);
    expect(moved.length).toBeGreaterThan(0);

    a.kill('SIGKILL');
    await a.exited;
    await waitFor('every number connected by B alone', async () => {
      b.assertRunning();
      const held = await owners();
      return (held.length === 1 && openCount() === NUMBERS) || undefined;
    }, { timeoutMs: 90_000 });

    for (const id of ids) {
      const sockets = server.connections.filter((c) => c.number === id);
      expect(overlapping(sockets), `${id}: ${JSON.stringify(sockets)}`).toBe(false);
      expect(server.openOf(id)).toHaveLength(1);
    }
  });
});
