import { randomBytes } from 'node:crypto';
import { BufferJSON } from '@whiskeysockets/baileys';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { PostgresAuthStore, StaleSocket } from '../../connectors/baileys/auth-store.js';
import { BaileysNetwork } from '../../connectors/baileys/network.js';
import { BaileysProtocol } from '../../connectors/baileys/protocol.js';
import type { NumberSession, SessionFact } from '../../connectors/network/connector.js';
import { pairedBaileysNumber } from '../support/baileys-numbers.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/env.js';
import { NetworkServer } from '../support/network-server.js';
import { PINNED_WEB_VERSION } from '../../connectors/baileys/web-version.js';

const unused = (): never => {
  throw new Error('not reached: the local server speaks no protocol');
};

/** Settles within `ms`, or says it is still pending. */
const settled = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([
    promise.then(
      () => 'committed' as const,
      (err: unknown) => err,
    ),
    new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms)),
  ]);

/**
 * Key writes of an ended socket (issue 18 item 4). The store fails (a trigger in Postgres refuses
 * the number's key rows), a real Baileys key transaction of the live socket fails, the session ends
 * that socket and starts a new one from the database, the database recovers: the old socket's
 * transaction is not retried into the database, no later write of the old socket lands, and the
 * new socket is never ended for the old one's failures.
 */
describe('key writes fenced by socket', () => {
  let db: TestDatabase;
  let server: NetworkServer;
  const sessions: NumberSession[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await NetworkServer.start();
    await db.pool.query(`CREATE FUNCTION refuse_keys() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the disk is full (test fault)'; END $$`);
  });

  afterAll(async () => {
    for (const session of sessions) await session.close();
    await server?.close();
    await db?.dispose();
  });

  async function network(): Promise<BaileysNetwork> {
    const logger = pino({ level: 'silent' });
    const mapping = new BaileysProtocol({ pool: db.pool, logger, media: { store: unused }, mediaOf: unused, otp: { open: unused } });
    const made = new BaileysNetwork({
      pool: db.pool,
      // Leases are not what these tests are about: the main pool carries them.
      leasePool: db.pool,
      logger,
      mapping,
      socket: { url: (id) => server.url(id), connectTimeoutMs: 60_000, reconnectBaseMs: 100, reconnectMaxMs: 1_000, leaseRenewMs: 1_000, baileysLogLevel: 'silent', version: () => Promise.resolve(PINNED_WEB_VERSION) },
    });
    await made.prepare();
    return made;
  }

  const storedSession = async (instanceId: string, id: string) => {
    const { rows } = await db.pool.query<{ value: string }>(`SELECT value FROM baileys.keys WHERE instance_id = $1 AND type = 'session' AND id = $2`, [instanceId, id]);
    return rows[0] === undefined ? undefined : (JSON.parse(rows[0].value, BufferJSON.reviver) as Uint8Array);
  };

  it('refuses every write of an ended socket, ends only the socket that failed, and retries no commit', async () => {
    const on = await network();
    const instance = await pairedBaileysNumber(db.pool, `inst_keys_${Date.now().toString(36)}`, { account: 'acc_keys', project: 'prj_keys' });
    const id = instance.instance_id;
    const facts: SessionFact[] = [];
    sessions.push(await on.open(instance, { emit: async (fact) => void facts.push(fact) }));
    await waitFor('the first socket', async () => server.openOf(id).length === 1 || undefined, { timeoutMs: 10_000 });
    const old = on.sessionOf(id)!.liveSocket!;

    // The store fails: every key row of this number is refused by the database.
    await db.pool.query(`CREATE TRIGGER keys_fault BEFORE INSERT OR UPDATE ON baileys.keys FOR EACH ROW WHEN (NEW.instance_id = '${id}') EXECUTE FUNCTION refuse_keys()`);
    const stale = randomBytes(32);
    // As Baileys' signal repository writes a session after decrypting: one key transaction of the socket.
    const transaction = old.authState.keys.transaction(async () => void (await old.authState.keys.set({ session: { 'peer.0': stale } })), 'peer');
    transaction.catch(() => undefined);

    await waitFor('the failed socket ended', async () => server.connections.filter((c) => c.number === id)[0]?.closedAt !== undefined || undefined, { timeoutMs: 10_000 });
    await waitFor('a new socket from the database', async () => (server.connections.filter((c) => c.number === id).length === 2 && server.openOf(id).length === 1) || undefined, { timeoutMs: 10_000 });
    expect(facts.some((f) => f.kind === 'state' && f.reason === 'auth state could not be saved')).toBe(true);
    // The database recovers.
    await db.pool.query(`DROP TRIGGER keys_fault ON baileys.keys`);

    // One commit, refused: the transaction does not come back with Baileys' default retries (3 s apart).
    const outcome = await settled(transaction, 6_000);
    expect(outcome).toBeInstanceOf(Error);
    expect(await storedSession(id, 'peer.0')).toBeUndefined();

    // The ended socket writes nothing any more, not even now that the database takes writes.
    await expect(old.authState.keys.set({ session: { 'later.0': randomBytes(32) } })).rejects.toBeInstanceOf(StaleSocket);
    expect(await storedSession(id, 'later.0')).toBeUndefined();

    // The new socket was never ended for the old one's failures, and writes.
    const fresh = on.sessionOf(id)!.liveSocket!;
    expect(fresh).not.toBe(old);
    expect(server.connections.filter((c) => c.number === id)).toHaveLength(2);
    expect(server.openOf(id)).toHaveLength(1);
    const current = randomBytes(32);
    await fresh.authState.keys.transaction(async () => void (await fresh.authState.keys.set({ session: { 'peer.0': current } })), 'peer');
    expect(Buffer.from((await storedSession(id, 'peer.0'))!)).toEqual(current);
    for (const session of sessions.splice(0)) await session.close();
  });

  it('makes the newest socket the only writer in the database: an older claim is refused, and a claim waits for a write in flight', async () => {
    const id = `inst_claims_${Date.now().toString(36)}`;
    // A pool of its own: the write in flight and the claim each hold a connection while they wait.
    const own = new pg.Pool({ connectionString: db.url, max: 4 });
    onTestFinished(() => own.end());
    const store = await PostgresAuthStore.open(own, id);
    const first = await store.claim();
    await first.keys.set({ session: { 'a.0': randomBytes(8) } });

    // A write of the first socket held up inside its transaction (a lock on its row) while the second claims.
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`INSERT INTO baileys.keys (instance_id, type, id, value) VALUES ($1, 'session', 'b.0', '"x"')`, [id]);
    const inFlight = first.keys.set({ session: { 'b.0': randomBytes(8) } });
    const waiting = (what: string, sessions: number) =>
      waitFor(what, async () => {
        const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        return rows[0]!.n >= sessions || undefined;
      }, { timeoutMs: 10_000 });
    // In flight: its transaction has checked the generation and waits on the blocker. A claim begun
    // before that point would simply come first (on a loaded machine it did), and is not this case.
    await waiting('the write in flight', 1);
    let claimedAt = 0;
    const second = store.claim().then((claim) => ((claimedAt = performance.now()), claim));
    await waiting('the claim waiting', 2);
    expect(claimedAt).toBe(0);
    await blocker.query('ROLLBACK');
    await blocker.end();
    await inFlight;
    const claim = await second;
    expect(claim.generation).toBe(first.generation + 1);
    // Begun before the claim, it is the first socket's to finish; only what comes after is refused.
    expect(await storedSession(id, 'b.0')).toBeDefined();

    await expect(first.keys.set({ session: { 'c.0': randomBytes(8) } })).rejects.toBeInstanceOf(StaleSocket);
    await expect(first.saveCreds()).rejects.toBeInstanceOf(StaleSocket);
    await claim.keys.set({ session: { 'c.0': randomBytes(8) } });
    expect(await storedSession(id, 'c.0')).toBeDefined();
  });
});
