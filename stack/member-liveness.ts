import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { runDdl } from '../shared/ddl.js';
import type { ProcessFence } from '../shared/process-fence.js';
// The lease module alone: the role processes other than the connector never load Baileys.
import { expireFenced } from '../connectors/baileys/lease.js';
import type { Clients } from './clients.js';
import { createMemberRemover, type GroupMember, type GroupMembers, type Kafka, type MemberChange, type RemovedMember } from '../topics/index.js';

/** The first key of every process lock (Postgres' two-key advisory locks), the second being the process's `lock_id`. */
export const PROCESS_LOCKS = 0x67617465;

const DDL = [
  'CREATE SEQUENCE IF NOT EXISTS gateway_process_locks AS integer CYCLE',
  `CREATE TABLE IF NOT EXISTS gateway_processes (
     lock_id integer PRIMARY KEY,
     cluster_id text NOT NULL,
     host text NOT NULL,
     pid integer NOT NULL,
     locked_at timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE TABLE IF NOT EXISTS gateway_process_members (
     lock_id integer NOT NULL REFERENCES gateway_processes ON DELETE CASCADE,
     consumer integer NOT NULL,
     group_id text NOT NULL,
     member_id text NOT NULL,
     group_instance_id text,
     PRIMARY KEY (lock_id, consumer)
   )`,
  'ALTER TABLE gateway_processes ADD COLUMN IF NOT EXISTS fence text',
];

/** Checks in a row that may go unanswered before this process lets go of what it holds under its fence. */
const LAPSE_CHECKS = 4;

/**
 * The processes of this cluster whose lock is free: they died, or lost their Postgres connection.
 * A process registered before Postgres last started has the grace to take its lock again first.
 */
const DEAD = `
  SELECT p.lock_id, p.host, p.pid, p.fence
    FROM gateway_processes p
   WHERE p.cluster_id = $1 AND p.lock_id <> $2
     AND (p.locked_at >= pg_postmaster_start_time() OR now() - pg_postmaster_start_time() > make_interval(secs => $3::double precision / 1000))
     AND NOT EXISTS (
       SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = ${PROCESS_LOCKS} AND l.objid = p.lock_id::oid)`;

export interface MemberLivenessOptions {
  readonly pool: pg.Pool;
  readonly databaseUrl: string;
  readonly kafka: Kafka;
  readonly members: GroupMembers;
  readonly logger: Logger;
  /** Where `gateway_dead_process_members_total{outcome}` is counted. */
  readonly registry: Registry;
  /** How often the processes' locks are checked. */
  readonly checkMs: number;
  /**
   * A session: how long a process has to take its lock again after Postgres restarts (then the
   * brokers have removed its members anyway), and how long a check may go unanswered before the
   * lock's connection is taken for lost and the lock taken again on a new one.
   */
  readonly graceMs: number;
  /** Begun and ended by the lock: what this process holds under it (numbers' leases) goes when it ends. */
  readonly fence: ProcessFence;
  /**
   * Told the fences of the processes found dead, once their members are removed: whatever those
   * processes held under them they let go within `withinMs` from now (or died), so it can be taken
   * then instead of when its own time runs out.
   */
  readonly onDead: (fences: readonly string[], withinMs: number) => Promise<void>;
}

export interface MemberLiveness {
  stop(): Promise<void>;
}

/** The liveness of `clients`' process, as its roles run it; none when `KAFKA_DEAD_MEMBER_CHECK_MS` is 0, or the clients were built without `liveness`. */
export function startProcessLiveness({ config, pool, kafka, members, fence, logger, metrics }: Clients): Promise<MemberLiveness> | undefined {
  if (!members || !fence) return undefined;
  return startMemberLiveness({
    pool,
    databaseUrl: config.databaseUrl,
    kafka,
    members,
    fence,
    logger,
    registry: metrics.registry,
    checkMs: config.kafka.deadMemberCheckMs,
    graceMs: config.kafka.sessionTimeoutMs,
    // A dead connector's numbers open elsewhere within seconds, not when their leases run out.
    onDead: (fences, withinMs) => expireFenced(pool, fences, withinMs),
  });
}

/**
 * Moves a dead process's partitions to the living as soon as it dies, instead of when its group
 * sessions end. Each process holds a Postgres advisory lock on a connection of its own, and records
 * beside it the member id of each of its consumers' latest join. Postgres frees the lock as soon as
 * the connection drops, which the kernel does when the process is killed; every `checkMs` each
 * process looks for a free lock, and the first to find one removes the dead process's members from
 * their groups (LeaveGroup on their behalf), which rebalances their partitions to the members left.
 * A lost host's connection drops only when TCP gives up: its members leave when their session ends,
 * as without this. A live process whose Postgres connection drops has its members removed too, and
 * its consumers rejoin: one rebalance, nothing lost.
 *
 * The lock also fences what the process holds outside Kafka (`fence`): each time it takes its lock
 * it records a new fence token beside it, and it ends the token when the lock's connection drops,
 * when a peer took it for dead, or when `LAPSE_CHECKS` checks in a row went unanswered (the
 * connection may be gone on the server's side). A peer that finds the lock free tells `onDead` the
 * token: by then the process has let go of what it held under it, or will within the lapse.
 */
export async function startMemberLiveness(options: MemberLivenessOptions): Promise<MemberLiveness> {
  const { members, logger, fence } = options;
  const lapseMs = LAPSE_CHECKS * options.checkMs;
  /** When the round trip that last confirmed the lock under the current fence was asked. */
  let confirmedAt = 0;
  await runDdl(options.pool, 'member-liveness', DDL);
  const remover = await createMemberRemover(options.kafka);
  const counted = new Counter({
    name: 'gateway_dead_process_members_total',
    help: 'Group members of dead gateway processes that this process removed on their behalf, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [options.registry],
  });
  let client: pg.Client | undefined;
  let lockId: number | undefined;
  let checking: Promise<void> | undefined;
  let checkingSince = 0;
  let stopped = false;
  // The lock's connection does one thing at a time: a member's write never lands inside a claim's transaction.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  };
  // One that fails is made good by the next registration.
  const write = (what: (c: pg.Client, id: number) => Promise<unknown>) =>
    void serially(() => (client && lockId !== undefined ? what(client, lockId) : Promise.resolve())).catch((err: unknown) => logger.warn({ err }, 'recording a group member failed'));

  /** Records this process, under a new fence, and every member it holds now under its lock, replacing what was recorded; then begins the fence. */
  const recordAll = async (on: pg.Client, id: number) => {
    const token = randomUUID();
    const asked = performance.now();
    await on.query(
      `INSERT INTO gateway_processes (lock_id, cluster_id, host, pid, fence) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (lock_id) DO UPDATE SET locked_at = now(), fence = EXCLUDED.fence`,
      [id, remover.clusterId, hostname(), process.pid, token],
    );
    await on.query('DELETE FROM gateway_process_members WHERE lock_id = $1', [id]);
    for (const change of members.held()) await record(on, id, change);
    if (on !== client) return;
    confirmedAt = asked;
    fence.begin(token);
  };

  /** Takes the lock (again, after a lost connection: the same one unless it is not free yet) and records every member. */
  const register = async () => {
    const next = new pg.Client({ connectionString: options.databaseUrl });
    next.on('error', (err) => lost(next, err));
    try {
      await next.connect();
      lockId ??= await newLockId(next);
      while (!(await tryLock(next, lockId))) lockId = await newLockId(next);
      // Changes from here on are written after the members read below, on the same connection.
      client = next;
      await recordAll(next, lockId);
    } catch (err) {
      if (client === next) client = undefined;
      await next.end().catch(() => undefined);
      throw err;
    }
  };

  let reconnecting: Promise<void> | undefined;
  const lost = (which: pg.Client, err: Error) => {
    if (which !== client || stopped) return;
    logger.warn({ err }, 'the connection holding this process\'s liveness lock dropped; taking it again');
    client = undefined;
    fence.end();
    // What waits on the dropped connection may never end (a network that drops packets): the new one starts afresh.
    checking = undefined;
    queue = Promise.resolve();
    void which.end().catch(() => undefined);
    reconnecting ??= retryUntilStopped(register).finally(() => (reconnecting = undefined));
  };
  const retryUntilStopped = async (attempt: () => Promise<void>) => {
    for (let delay = 100; !stopped; delay = Math.min(delay * 2, 5_000)) {
      try {
        return await attempt();
      } catch (err) {
        logger.warn({ err }, 'taking the liveness lock failed; trying again');
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  };

  // Listening first: a change before the lock is taken is in the members `register` records.
  const unlisten = members.listen((change) => write((c, id) => record(c, id, change)));
  await register().catch(async (err: unknown) => {
    unlisten();
    await remover.close();
    throw err;
  });

  const check = async () => {
    const own = client;
    if (!own || lockId === undefined) return;
    const id = lockId;
    const asked = performance.now();
    // One round trip a check: whether this process is still recorded, and whether any other died.
    const { rows } = await own.query<{ recorded: boolean; dead: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM gateway_processes WHERE lock_id = $2) AS recorded, EXISTS (${DEAD}) AS dead`,
      [remover.clusterId, id, options.graceMs],
    );
    if (own !== client) return;
    // A peer that saw this process's lock free (its connection dropped a moment) removed its row, and
    // ended its fence: recorded again, under a new one. After a lapse, the connection was alive all
    // along (this answer came on it), but what the fence held is let go already: a new one too.
    if (!rows[0]!.recorded || fence.current === undefined) {
      if (!rows[0]!.recorded) logger.warn('a peer took this process for dead; recording it again');
      fence.end();
      await serially(() => recordAll(own, id)).catch((err: unknown) => logger.warn({ err }, 'recording this process again failed'));
    } else confirmedAt = asked;
    if (rows[0]!.dead) await serially(() => removeDead(own, id));
  };
  /** Claims the processes found dead, removes their members and deletes their rows, in one transaction. */
  const removeDead = async (own: pg.Client, id: number) => {
    await own.query('BEGIN');
    try {
      // Claimed: a peer checking at the same time skips them.
      const claimed = await own.query<{ lock_id: number; host: string; pid: number; fence: string | null }>(`${DEAD} FOR UPDATE OF p SKIP LOCKED`, [remover.clusterId, id, options.graceMs]);
      const ids = claimed.rows.map((row) => row.lock_id);
      if (ids.length === 0) {
        await own.query('COMMIT');
        return;
      }
      const held = await own.query<{ group_id: string; member_id: string; group_instance_id: string | null }>(
        'SELECT group_id, member_id, group_instance_id FROM gateway_process_members WHERE lock_id = ANY($1)',
        [ids],
      );
      const removed = await remover.remove(held.rows.map((row): GroupMember => ({ groupId: row.group_id, memberId: row.member_id, groupInstanceId: row.group_instance_id })));
      await own.query('DELETE FROM gateway_processes WHERE lock_id = ANY($1)', [ids]);
      await own.query('COMMIT');
      const processes = claimed.rows.map(({ host, pid }) => ({ host, pid }));
      const count = (outcome: RemovedMember['outcome']) => removed.filter((member) => member.outcome === outcome).length;
      for (const outcome of ['removed', 'gone', 'replaced'] as const) counted.inc({ outcome }, count(outcome));
      logger.warn({ processes, removed: count('removed'), gone: count('gone'), replaced: count('replaced') }, 'gateway processes died: their group members were removed, so their partitions move to the others');
      const fences = claimed.rows.flatMap((row) => row.fence ?? []);
      // Failing, what they held under their fences ends in its own time instead.
      if (fences.length > 0) void options.onDead(fences, lapseMs + 2 * options.checkMs).catch((err: unknown) => logger.warn({ err }, 'ending what the dead processes held under their fences failed'));
    } catch (err) {
      await own.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  };
  const timer = setInterval(() => {
    const now = performance.now();
    if (fence.current !== undefined && now - confirmedAt > lapseMs) {
      logger.warn({ lapseMs }, "this process's liveness lock went unconfirmed: what it holds under its fence is let go");
      fence.end();
    }
    // Unanswered for a whole session, the connection is taken for lost: a network that drops its packets never says so.
    if (checking !== undefined && client !== undefined && now - checkingSince > options.graceMs) lost(client, new Error(`a check went unanswered for ${options.graceMs} ms`));
    if (checking !== undefined) return;
    checkingSince = now;
    const run: Promise<void> = check()
      .catch((err: unknown) => logger.warn({ err }, "checking the processes' liveness locks failed"))
      .finally(() => {
        if (checking === run) checking = undefined;
      });
    checking = run;
  }, options.checkMs);
  timer.unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      fence.end();
      unlisten();
      await checking;
      await queue;
      await reconnecting;
      await remover.close().catch(() => undefined);
      const last = client;
      client = undefined;
      if (!last || lockId === undefined) return;
      // Its consumers have left their groups already; the row goes, and the lock with the connection.
      await last.query('DELETE FROM gateway_processes WHERE lock_id = $1', [lockId]).catch((err: unknown) => logger.warn({ err }, "removing this process's liveness row failed"));
      await last.end().catch(() => undefined);
    },
  };
}

async function newLockId(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ id: number }>("SELECT nextval('gateway_process_locks')::integer AS id");
  return rows[0]!.id;
}

async function tryLock(client: pg.Client, lockId: number): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${PROCESS_LOCKS}, $1) AS locked`, [lockId]);
  return rows[0]!.locked;
}

function record(client: pg.Client, lockId: number, { consumer, member }: MemberChange): Promise<unknown> {
  if (!member) return client.query('DELETE FROM gateway_process_members WHERE lock_id = $1 AND consumer = $2', [lockId, consumer]);
  return client.query(
    `INSERT INTO gateway_process_members (lock_id, consumer, group_id, member_id, group_instance_id) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (lock_id, consumer) DO UPDATE SET group_id = EXCLUDED.group_id, member_id = EXCLUDED.member_id, group_instance_id = EXCLUDED.group_instance_id`,
    [lockId, consumer, member.groupId, member.memberId, member.groupInstanceId],
  );
}
