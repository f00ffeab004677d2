import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { leasePool } from '../../connectors/baileys/lease.js';
import { BaileysNetwork } from '../../connectors/baileys/network.js';
import { PINNED_WEB_VERSION } from '../../connectors/baileys/web-version.js';
import { BaileysProtocol } from '../../connectors/baileys/protocol.js';
import type { SocketOptions } from '../../connectors/baileys/socket-options.js';
import type { NumberSession, SessionFact, StateFact } from '../../connectors/network/connector.js';
import { ProcessFence } from '../../shared/process-fence.js';
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

  async function network(overrides: Partial<SocketOptions> = {}, fence?: ProcessFence): Promise<{ on: BaileysNetwork; mapping: BaileysProtocol }> {
    const logger = pino({ level: 'silent' });
    const mapping = new BaileysProtocol({ pool: db.pool, logger, media: { store: unused }, mediaOf: unused, otp: { open: unused } });
    const socket: SocketOptions = {
      url: (id) => server.url(id),
      connectTimeoutMs: 60_000,
      version: () => Promise.resolve(PINNED_WEB_VERSION),
      reconnectBaseMs: 100,
      reconnectMaxMs: 1_000,
      leaseRenewMs: PERIOD_MS,
      baileysLogLevel: 'silent',
      ...overrides,
    };
    const on = new BaileysNetwork({ pool: db.pool, leasePool: leases, logger, socket, mapping, ...(fence && { fence }) });
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

  it('closes its socket when the process’s fence ends, and takes the number back under the next one, its lease given back late, not when it runs out', async () => {
    const fence = new ProcessFence();
    const instance = await pairedNumber('fenced');
    const id = instance.instance_id;
    // A lease that lives a minute: the number must come back long before.
    const { on } = await network({ leaseRenewMs: 20_000 }, fence);
    const { facts } = await open(on, instance);
    fence.begin('first-fence');
    await socketOpen(id);
    const leaseRow = async () => (await db.pool.query<{ fence: string; generation: string }>('SELECT fence, generation FROM baileys.leases WHERE instance_id = $1', [id])).rows[0]!;
    expect((await leaseRow()).fence).toBe('first-fence');

    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      // The lease row locked, as a database away would: giving the lease back fails.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM baileys.leases WHERE instance_id = $1 FOR UPDATE', [id]);
      fence.end();
      const lost = await waitFor('disconnected', () => states(facts).find((f) => f.status === 'disconnected'), { timeoutMs: 5_000 });
      expect(lost.reason).toMatch(/liveness lapsed/);
      await waitFor('the socket closed', () => server.openOf(id).length === 0 || undefined, { timeoutMs: 5_000 });
      fence.begin('second-fence');
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }

    await waitFor('the number taken back', () => (server.attemptsOf(id).length === 2 && server.openOf(id).length === 1) || undefined, { timeoutMs: 10_000 });
    expect(await leaseRow()).toEqual({ fence: 'second-fence', generation: '2' });
    expect(overlapping(id)).toBe(false);
  });

  it('gives back a lease taken under a fence that ended while it was being taken, and takes it under the next', async () => {
    const fence = new ProcessFence();
    fence.begin('before');
    const instance = await pairedNumber('raced');
    const id = instance.instance_id;
    const { on } = await network({ leaseRenewMs: 20_000 }, fence);
    await db.pool.query("INSERT INTO baileys.leases (instance_id, owner, generation, expires_at) VALUES ($1, 'nobody', 1, now())", [id]);
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM baileys.leases WHERE instance_id = $1 FOR UPDATE', [id]);
      await open(on, instance);
      await waitFor('the session taking the lease, held by the row lock', async () => {
        const { rowCount } = await db.pool.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO baileys.leases%'",
        );
        return rowCount === 1;
      });
      fence.begin('after');
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }

    await socketOpen(id);
    const { rows } = await db.pool.query<{ fence: string; generation: string }>('SELECT fence, generation FROM baileys.leases WHERE instance_id = $1', [id]);
    expect(rows).toEqual([{ fence: 'after', generation: '3' }]);
    expect(server.attemptsOf(id)).toHaveLength(1);
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

  /** What Baileys' socket does when the network ends the stream with this code. */
  const streamError = (statusCode: number) => Object.assign(new Error('Stream Errored'), { output: { statusCode } });
  const unpairedNumber = async (label: string): Promise<InstanceState> => {
    const instance = { ...(await pairedNumber(label)), status: 'pending' as const, phone: null };
    await db.pool.query(`DELETE FROM baileys.creds WHERE instance_id = $1`, [instance.instance_id]);
    return instance;
  };
  const storedMe = async (id: string) => {
    const { rows } = await db.pool.query<{ creds: string }>(`SELECT creds FROM baileys.creds WHERE instance_id = $1`, [id]);
    return rows[0] === undefined ? 'no creds' : (JSON.parse(rows[0].creds) as { me?: unknown }).me;
  };

  it('pairs from fresh credentials after a logout from the phone (401)', async () => {
    const instance = await pairedNumber('loggedout');
    const id = instance.instance_id;
    const { on } = await network();
    const { facts } = await open(on, instance);
    await socketOpen(id);
    const old = on.sessionOf(id)!.liveSocket!.authState.creds;
    await on.sessionOf(id)!.liveSocket!.end(streamError(401));
    await waitFor('logged_out', () => states(facts).find((f) => f.status === 'logged_out'), { timeoutMs: 5_000 });

    await on.apply(pairCommand(id));
    await waitFor('a pairing socket', () => (server.attemptsOf(id).length === 2 && server.openOf(id).length === 1) || undefined, { timeoutMs: 10_000 });
    const fresh = on.sessionOf(id)!.liveSocket!.authState.creds;
    expect(fresh.me).toBeUndefined();
    expect(fresh.registered).toBe(false);
    expect(Buffer.from(fresh.noiseKey.public).equals(Buffer.from(old.noiseKey.public))).toBe(false);
    expect(await storedMe(id)).toBeUndefined();
  });

  it('restarts at once for the first 515 after a pairing only; the next 515 waits its backoff', async () => {
    const instance = await unpairedNumber('justpaired');
    const id = instance.instance_id;
    const { on } = await network({ reconnectBaseMs: 1_000, reconnectMaxMs: 2_000 });
    const { session } = await open(on, instance);
    await session.pair('qr');
    await socketOpen(id);
    const pairing = on.sessionOf(id)!.liveSocket!;
    // The phone scanned: the socket learns who it is, then the network asks for a restart.
    pairing.ev.emit('creds.update', { me: { id: '5511977776666:7@s.whatsapp.net' } });
    await waitFor('the identity stored', async () => (await storedMe(id)) !== undefined || undefined, { timeoutMs: 5_000 });
    await pairing.end(streamError(515));
    await waitFor('the restart', () => (server.attemptsOf(id).length === 2 && server.openOf(id).length === 1) || undefined, { timeoutMs: 5_000 });
    const [first, second] = server.connections.filter((c) => c.number === id);
    expect(second!.openedAt - first!.closedAt!).toBeLessThan(400);

    await on.sessionOf(id)!.liveSocket!.end(streamError(515));
    await waitFor('the second restart', () => server.attemptsOf(id).length === 3 || undefined, { timeoutMs: 5_000 });
    expect(server.attemptsOf(id)[2]! - second!.closedAt!).toBeGreaterThanOrEqual(500 - 25);
  });

  it('backs off against a network that keeps closing with 515 (no burst of connects)', async () => {
    const instance = await pairedNumber('restarts');
    const id = instance.instance_id;
    const { on } = await network();
    const { facts } = await open(on, instance);
    const ended = new Set<unknown>();
    const started = performance.now();
    await waitFor(
      'two seconds of 515s',
      async () => {
        const socket = on.sessionOf(id)?.liveSocket;
        if (socket !== undefined && server.openOf(id).length === 1 && !ended.has(socket)) {
          ended.add(socket);
          await socket.end(streamError(515));
        }
        return performance.now() - started >= 2_000 || undefined;
      },
      { timeoutMs: 5_000, intervalMs: 5 },
    );
    const attempts = server.attemptsOf(id);
    // Waits of half to all of 100, 200, 400, 800, 1000 ms: at most 7 connects in two seconds.
    expect(attempts.length).toBeLessThanOrEqual(7);
    attempts.slice(1).forEach((at, i) => expect(at - attempts[i]!, `wait before attempt ${i + 2}`).toBeGreaterThanOrEqual(Math.min(1_000, 100 * 2 ** i) / 2 - 25));
    expect(states(facts).at(-1)).toMatchObject({ status: 'disconnected', reason: 'the network asked for a restart (515)' });
  });

  it('retries a replaced connection (440) slowly while it holds the number, and says so', async () => {
    const instance = await pairedNumber('replaced');
    const id = instance.instance_id;
    const { on } = await network({ reconnectBaseMs: 100, reconnectMaxMs: 1_000 });
    const { facts } = await open(on, instance);
    await socketOpen(id);
    await on.sessionOf(id)!.liveSocket!.end(streamError(440));
    const replaced = await waitFor('disconnected', () => states(facts).find((f) => f.status === 'disconnected'), { timeoutMs: 5_000 });
    expect(replaced.reason).toMatch(/took over; retrying slowly/);
    await waitFor('the slow retry', () => (server.attemptsOf(id).length === 2 && server.openOf(id).length === 1) || undefined, { timeoutMs: 5_000 });
    const [first] = server.connections.filter((c) => c.number === id);
    // Half the longest wait at least, never the quick first step of the backoff.
    expect(server.attemptsOf(id)[1]! - first!.closedAt!).toBeGreaterThanOrEqual(500 - 25);
  });

  it('reports a pairing code the network could not be asked for, instead of waiting silently', async () => {
    const instance = await unpairedNumber('nocode');
    const id = instance.instance_id;
    server.set(id, { kind: 'stall' });
    const { on } = await network();
    const { session, facts } = await open(on, instance);
    await session.pair('code', '+5511912345678');
    const socket = await waitFor('the connecting socket', () => (server.attemptsOf(id).length === 1 && on.sessionOf(id)?.liveSocket) || undefined, { timeoutMs: 10_000 });
    socket.ev.emit('connection.update', { qr: '2@qr-ref,noise,identity,adv' });
    const failed = await waitFor('the pairing failure', () => states(facts).find((f) => f.status === 'disconnected'), { timeoutMs: 5_000 });
    expect(failed.reason).toMatch(/pairing code could not be obtained.*ask for a new pairing/);
    expect(facts.some((f) => f.kind === 'pairing')).toBe(false);
    expect(on.sessionOf(id)!.liveSocket).toBeUndefined();
    // The next pairing registers anew rather than logging in as the phone Baileys noted before it asked.
    expect(await storedMe(id)).toBeUndefined();
  });

  it('shows the first QR of a pairing for 60 s and the next ones for 20 s', async () => {
    const instance = await unpairedNumber('qrs');
    const id = instance.instance_id;
    const { on } = await network();
    const { session, facts } = await open(on, instance);
    await session.pair('qr');
    await socketOpen(id);
    const socket = on.sessionOf(id)!.liveSocket!;
    const shown = Date.now();
    socket.ev.emit('connection.update', { qr: 'first' });
    socket.ev.emit('connection.update', { qr: 'second' });
    await waitFor('two QRs', () => facts.filter((f) => f.kind === 'pairing').length === 2 || undefined, { timeoutMs: 5_000 });
    const lives = facts.flatMap((f) => (f.kind === 'pairing' ? [Math.round((f.expires_at - shown) / 1_000)] : []));
    expect(lives).toEqual([60, 20]);
  });

  it('drops a number’s caches when its session stops for good (its partition moved away)', async () => {
    const instance = await pairedNumber('moved');
    const id = instance.instance_id;
    const { on, mapping } = await network();
    const { session } = await open(on, instance);
    await socketOpen(id);
    await mapping.retryCounters(id).set('MSG1', 3);
    expect(await mapping.retryCounters(id).get('MSG1')).toBe(3);
    await session.close();
    expect(await mapping.retryCounters(id).get('MSG1')).toBeUndefined();
  });
});
