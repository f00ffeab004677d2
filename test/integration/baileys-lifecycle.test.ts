import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { leasePool } from '../../connectors/baileys/lease.js';
import { BaileysNetwork } from '../../connectors/baileys/network.js';
import { BaileysProtocol } from '../../connectors/baileys/protocol.js';
import type { SocketOptions } from '../../connectors/baileys/socket-options.js';
import type { NumberSession, SessionFact, StateFact } from '../../connectors/network/connector.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState, NumberCommand } from '../../schemas/records.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/env.js';
import { pairedBaileysNumber } from '../support/baileys-numbers.js';
import { NetworkServer } from '../support/network-server.js';

const unused = (): never => {
  throw new Error('not reached: the local server speaks no protocol');
};

const PERIOD_MS = 300;

/**
 * The Baileys session's life under faults (issue 18): a stalled lease renewal, a database error at
 * start, logout, restart-required and replaced closes, a failed pairing code, against the local
 * WebSocket server and a real Postgres.
 */
describe('the Baileys session’s lifecycle under faults', () => {
  let db: TestDatabase;
  let leases: pg.Pool;
  let server: NetworkServer;
  const sessions: NumberSession[] = [];

  async function network(overrides: Partial<SocketOptions> = {}): Promise<{ on: BaileysNetwork; mapping: BaileysProtocol }> {
    const logger = pino({ level: 'silent' });
    const mapping = new BaileysProtocol({ pool: db.pool, logger, media: { store: unused }, mediaOf: unused, otp: { open: unused } });
    const socket: SocketOptions = {
      url: (id) => server.url(id),
      connectTimeoutMs: 60_000,
      reconnectBaseMs: 100,
      reconnectMaxMs: 1_000,
      leaseRenewMs: PERIOD_MS,
      baileysLogLevel: 'silent',
      ...overrides,
    };
    const on = new BaileysNetwork({ pool: db.pool, leasePool: leases, logger, socket, mapping });
    await on.prepare();
    return { on, mapping };
  }

  async function open(on: BaileysNetwork, instance: InstanceState) {
    const facts: SessionFact[] = [];
    const session = await on.open(instance, { emit: async (fact) => void facts.push(fact) });
    sessions.push(session);
    return { session, facts };
  }

  const pairedNumber = (label: string) => pairedBaileysNumber(db.pool, `inst_${label}_${Date.now().toString(36)}`, { account: 'acc_life', project: 'prj_life' });
  const states = (facts: SessionFact[]) => facts.filter((f): f is StateFact => f.kind === 'state');
  const socketOpen = (id: string) => waitFor(`a socket of ${id}`, () => server.openOf(id).length === 1 || undefined, { timeoutMs: 10_000 });
  const pairCommand = (id: string): NumberCommand => ({
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId('acc_life'),
    project_id: asProjectId('prj_life'),
    instance_id: asInstanceId(id),
    command: { kind: 'pair', method: 'qr', phone: null },
  });
  const overlapping = (id: string) => {
    const sockets = server.connections.filter((c) => c.number === id);
    return sockets.some((a, i) => sockets.slice(i + 1).some((b) => a.openedAt < (b.closedAt ?? Infinity) && b.openedAt < (a.closedAt ?? Infinity)));
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    leases = leasePool(db.url, PERIOD_MS, pino({ level: 'silent' }));
    server = await NetworkServer.start();
    await network(); // creates the connector's tables
  });

  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.close();
  });

  afterAll(async () => {
    await server?.close();
    await leases?.end();
    await db?.dispose();
  });

  it('writes disconnected when a lease renewal stalls (row locked), takes the number back, and pairs on request afterwards', async () => {
    const instance = await pairedNumber('stalled');
    const id = instance.instance_id;
    const { on } = await network();
    const { facts } = await open(on, instance);
    await socketOpen(id);

    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM baileys.leases WHERE instance_id = $1 FOR UPDATE`, [id]);
      const lost = await waitFor('disconnected', () => states(facts).find((f) => f.status === 'disconnected'), { timeoutMs: 5_000 });
      expect(lost.reason).toMatch(/lease not renewed in time/);
      await waitFor('the socket closed', () => server.openOf(id).length === 0 || undefined, { timeoutMs: 5_000 });
      expect(on.openSessions()).toContain(id);
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }

    await waitFor('the number taken back', () => (server.attemptsOf(id).length === 2 && server.openOf(id).length === 1) || undefined, { timeoutMs: 10_000 });
    await on.apply(pairCommand(id));
    await waitFor('a pairing socket', () => (server.attemptsOf(id).length === 3 && server.openOf(id).length === 1) || undefined, { timeoutMs: 10_000 });
    expect(overlapping(id)).toBe(false);
  });

  it('keeps renewing its lease while message traffic holds every connection of the main pool', async () => {
    const instance = await pairedNumber('starved');
    const id = instance.instance_id;
    const { on } = await network();
    const { facts } = await open(on, instance);
    await socketOpen(id);
    const held = await Promise.all(Array.from({ length: 4 }, () => db.pool.connect()));
    try {
      const until = performance.now() + 5 * PERIOD_MS;
      await waitFor('five periods', () => performance.now() >= until || undefined, { timeoutMs: 5_000, intervalMs: 50 });
    } finally {
      for (const client of held) client.release();
    }
    expect(states(facts).map((f) => f.status)).not.toContain('disconnected');
    expect(server.attemptsOf(id)).toHaveLength(1);
    expect(server.openOf(id)).toHaveLength(1);
    expect(on.openSessions()).toContain(id);
  });

  it('retries a start the database failed, with backoff, and says so in the number’s status', async () => {
    const instance = await pairedNumber('dbdown');
    const id = instance.instance_id;
    const { on } = await network();
    await db.pool.query(`ALTER TABLE baileys.creds RENAME TO creds_away`);
    let renamed = true;
    try {
      const { facts } = await open(on, instance);
      const failed = await waitFor('the failed start reported', () => states(facts).find((f) => f.status === 'disconnected'), { timeoutMs: 5_000 });
      expect(failed.reason).toMatch(/could not start.*creds.*retrying/);
      expect(server.attemptsOf(id)).toHaveLength(0);
      await db.pool.query(`ALTER TABLE baileys.creds_away RENAME TO creds`);
      renamed = false;
      await socketOpen(id);
    } finally {
      if (renamed) await db.pool.query(`ALTER TABLE baileys.creds_away RENAME TO creds`);
    }
  });
});
