import pg from 'pg';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireFenced, NumberLeases } from '../../connectors/baileys/lease.js';
import { baileysDdl } from '../../connectors/baileys/tables.js';
import { runDdl } from '../../shared/ddl.js';
import { ProcessFence } from '../../shared/process-fence.js';
import { loadConfig } from '../../stack/config.js';
import { PROCESS_LOCKS, startMemberLiveness, type MemberLiveness } from '../../stack/member-liveness.js';
import { createKafka, GroupMembers, type Kafka } from '../../topics/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/env.js';
import { LIVENESS_LOCKS } from '../support/liveness-locks.js';
import { StallingProxy } from '../support/stalling-proxy.js';

const CHECK_MS = 100;
const logger = pino({ level: 'silent' });

/**
 * The process fence (issue 22 item 5): what a process holds outside Kafka (a number's lease) is
 * held under a token of its liveness lock, which it lets go as soon as the lock may be gone, so a
 * peer that finds the lock free can end those leases within seconds instead of their time to live.
 */
describe('the process fence of the liveness lock', () => {
  let db: TestDatabase;
  let kafka: Kafka;
  const started: MemberLiveness[] = [];
  const closing: Array<() => Promise<unknown>> = [];
  /** What every process here was told of dead ones: any of them may be the one that finds a process dead. */
  const told: Array<{ fences: readonly string[]; withinMs: number }> = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await runDdl(db.pool, 'baileys', baileysDdl);
    kafka = createKafka(loadConfig().kafka, logger);
  });

  afterAll(async () => {
    // The proxies first: a check held by a stalled one ends with its connection.
    for (const close of closing) await close();
    for (const liveness of started) await liveness.stop();
    await db?.dispose();
  });

  /** A process's liveness, as the roles run it, its lock's connection on `databaseUrl`, its session `graceMs`. */
  const live = async (databaseUrl = db.url, graceMs = 10_000) => {
    const fence = new ProcessFence();
    const ended: string[] = [];
    fence.onEnd((token) => ended.push(token));
    const liveness = await startMemberLiveness({
      pool: db.pool,
      databaseUrl,
      kafka,
      members: new GroupMembers(),
      fence,
      logger,
      registry: new Registry(),
      checkMs: CHECK_MS,
      graceMs,
      onDead: async (fences, withinMs) => {
        told.push({ fences, withinMs });
        await expireFenced(db.pool, fences, withinMs);
      },
    });
    started.push(liveness);
    return { fence, ended };
  };
  const recordedFence = async (token: string) => (await db.pool.query('SELECT 1 FROM gateway_processes WHERE fence = $1', [token])).rowCount === 1;
  /** The backend holding the liveness lock recorded under `token`, if it is held. */
  const lockHolder = async (token: string) =>
    (
      await db.pool.query<{ pid: number }>(`SELECT l.pid FROM ${LIVENESS_LOCKS} AND l.granted WHERE p.fence = $1`, [token])
    ).rows[0]?.pid;

  it('ends the fence when the lock’s connection drops, and begins a new one recorded beside the lock taken again', async () => {
    const { fence, ended } = await live();
    const first = fence.current!;
    expect(first).toBeDefined();
    expect(await recordedFence(first)).toBe(true);

    await db.pool.query('SELECT pg_terminate_backend($1)', [await lockHolder(first)]);
    const second = await waitFor('a new fence', () => (fence.current !== undefined && fence.current !== first ? fence.current : undefined));
    expect(ended).toEqual([first]);
    expect(await recordedFence(second)).toBe(true);
    expect(await lockHolder(second)).toBeDefined();
  });

  /** A proxy in front of the test's database, and the database's URL through it. */
  const proxied = async () => {
    const target = new URL(db.url);
    const proxy = await StallingProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    closing.push(() => proxy.close());
    const through = new URL(db.url);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    return { proxy, url: through.toString() };
  };

  it('lets go when its checks go unanswered, its lock still held, and begins anew once they are answered', async () => {
    const { proxy, url } = await proxied();
    const { fence, ended } = await live(url);
    const first = fence.current!;
    expect(first).toBeDefined();

    proxy.stall();
    await waitFor('the fence ended while the network stalls', () => ended.includes(first));
    expect(fence.current).toBeUndefined();
    // The server still holds the lock: no peer can take the process for dead meanwhile.
    expect(await lockHolder(first)).toBeDefined();

    proxy.resume();
    const second = await waitFor('a new fence once the checks are answered', () => fence.current);
    expect(second).not.toBe(first);
    expect(await recordedFence(second)).toBe(true);
  });

  it('takes its lock again on a new connection when a check goes unanswered for a session, and begins a new fence there', async () => {
    const { proxy, url } = await proxied();
    const { fence, ended } = await live(url, 1_000);
    const first = fence.current!;
    const firstHolder = await lockHolder(first);
    expect(firstHolder).toBeDefined();

    // Its packets dropped for good: the connection never says it is gone.
    proxy.stall();
    const second = await waitFor('a new fence on a new connection', () => (fence.current !== undefined && fence.current !== first ? fence.current : undefined));
    expect(ended).toContain(first);
    const secondHolder = await lockHolder(second);
    expect(secondHolder).toBeDefined();
    expect(secondHolder).not.toBe(firstHolder);
  });

  it('tells the fence of a process found dead, whose leases then end within the time given, and no other lease', async () => {
    const { fence } = await live();
    const { rows } = await db.pool.query<{ cluster_id: string }>('SELECT cluster_id FROM gateway_processes WHERE fence = $1', [fence.current]);
    // A process of the same cluster, played by a bare connection: its lock, its row, and a lease under its fence.
    const dying = new pg.Client({ connectionString: db.url });
    await dying.connect();
    const lockId = (await dying.query<{ id: number }>("SELECT nextval('gateway_process_locks')::integer AS id")).rows[0]!.id;
    await dying.query(`SELECT pg_advisory_lock(${PROCESS_LOCKS}, $1)`, [lockId]);
    await dying.query("INSERT INTO gateway_processes (lock_id, cluster_id, host, pid, fence) VALUES ($1, $2, 'elsewhere', 1, 'fence-of-the-dying')", [lockId, rows[0]!.cluster_id]);
    const leases = new NumberLeases(db.pool, 60_000);
    expect(await leases.acquire('inst_of_the_dying', 'dying', 'fence-of-the-dying')).toBeDefined();
    expect(await leases.acquire('inst_of_a_living', 'living', fence.current)).toBeDefined();
    // Alive, its lease is its own until its time to live.
    expect(await leases.acquire('inst_of_the_dying', 'taker')).toBeUndefined();

    await dying.end();
    const taken = await waitFor('the dead process’s lease taken', () => leases.acquire('inst_of_the_dying', 'taker'), { timeoutMs: 20_000, intervalMs: 100 });
    expect(taken.generation).toBe(2);
    // Only what concerns this process: a process of an earlier test (its lock's connection cut or
    // stalled there) may be found dead meanwhile too, and is told of as it should be.
    expect(told.filter((t) => t.fences.includes('fence-of-the-dying'))).toEqual([{ fences: ['fence-of-the-dying'], withinMs: CHECK_MS * 6 }]);
    expect(await leases.acquire('inst_of_a_living', 'taker')).toBeUndefined();
  });
});
