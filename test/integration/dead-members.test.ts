import type { Admin, GroupDescription } from 'kafkajs';
import pg from 'pg';
import { request } from 'undici';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../topics/index.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { freePort, spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { groupsOf, partitionsOf } from '../support/groups.js';
import { LIVENESS_LOCKS } from '../support/liveness-locks.js';


/** Long enough that the killed member's session cannot be what moves its partitions. */
const SESSION_MS = 60_000;

/**
 * A SIGKILLed role process that nobody restarts: its peer finds its liveness lock free and removes
 * its members from their groups, so its partitions move at once. Without that, the killed members
 * stayed in every group until their sessions ended, and the survivor waited for them.
 */
describe('a role process killed and not restarted', () => {
  let env: TestEnv;
  let admin: Admin;
  let db: pg.Client;
  const processes: GatewayProcess[] = [];
  const dispatcher = (name: string, instanceId: string | undefined, metricsPort: number) => {
    const named = { KAFKA_CLIENT_ID: `${env.id}-${name}`, METRICS_PORT: String(metricsPort), HOST: '127.0.0.1', ...(instanceId && { GATEWAY_INSTANCE_ID: `${env.id}-${instanceId}` }) };
    const started = spawnGateway(['dispatcher'], { ...env.env, ...named });
    processes.push(started);
    return started;
  };

  beforeAll(async () => {
    env = await createTestEnv({ KAFKA_SESSION_TIMEOUT_MS: String(SESSION_MS) });
    admin = createKafka(env.config.kafka, pino({ level: 'silent' })).admin();
    await admin.connect();
    db = new pg.Client({ connectionString: env.config.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    for (const started of processes) started.kill('SIGKILL');
    await Promise.all(processes.map((started) => started.exited));
    await db?.end();
    await admin?.disconnect();
    await env?.dispose();
  });

  /** The dispatcher's shared groups once each is stable with exactly the members named. */
  const settled = (what: string, running: readonly GatewayProcess[], names: readonly string[]) =>
    waitFor(
      what,
      async () => {
        for (const started of running) started.assertRunning();
        const groups = (await groupsOf(admin, env.id)).filter((g) => g.groupId.startsWith(`${env.id}.dispatcher`));
        const stable = groups.length > 0 && groups.every((g) => g.state === 'Stable' && g.members.length === names.length && names.every((name) => memberOf(g, name)));
        return stable ? groups : undefined;
      },
      { timeoutMs: SESSION_MS * 0.75, intervalMs: 100 },
    );
  /** A member's id starts with its instance id, or without one its client id. */
  const memberOf = (group: GroupDescription, name: string) => group.members.find((m) => m.memberId.startsWith(`${env.id}-${name}-`));

  it.each([
    { kind: 'dynamic', names: ['dyn-a', 'dyn-b'], instances: [undefined, undefined] },
    { kind: 'static', names: ['st-a', 'st-b'], instances: ['st-a', 'st-b'] },
  ])("hands a killed $kind member's partitions to the survivor before the killed member's session ends", async ({ names, instances }) => {
    const [killedName, survivorName] = names as [string, string];
    const killed = dispatcher(killedName, instances[0], await freePort());
    const metricsPort = await freePort();
    const survivor = dispatcher(survivorName, instances[1], metricsPort);
    const before = await settled('both dispatchers in every group', [killed, survivor], names);
    const partitions = new Map(before.map((g) => [g.groupId, g.members.flatMap(partitionsOf).sort()]));
    expect(before.some((g) => partitionsOf(memberOf(g, killedName)!).length > 0), 'the process to kill held no partition').toBe(true);

    // Its liveness connection dropped (a network blip, a Postgres failover): the process takes its lock
    // again and records its members anew, the survivor having maybe removed them meanwhile.
    const lock = await db.query<{ pid: number }>(`SELECT l.pid FROM ${LIVENESS_LOCKS} AND p.pid = $1`, [killed.child.pid]);
    expect(lock.rowCount).toBe(1);
    await db.query('SELECT pg_terminate_backend($1)', [lock.rows[0]!.pid]);
    // A peer may have taken it for dead meanwhile (its members rejoin, it records itself again): settled once it has held for a while.
    let recordedSince: number | undefined;
    await waitFor(
      'the process to kill to hold its lock again, its members recorded',
      async () => {
        const groups = await settled('both dispatchers in every group', [killed, survivor], names);
        const current = groups.map((g) => memberOf(g, killedName)!.memberId).sort();
        const { rows } = await db.query<{ member_id: string }>(
          `SELECT m.member_id FROM ${LIVENESS_LOCKS} AND l.granted AND p.pid = $1 JOIN gateway_process_members m ON m.lock_id = p.lock_id AND m.group_id LIKE $2`,
          [killed.child.pid, `${env.id}.dispatcher%`],
        );
        const recorded = JSON.stringify(rows.map((row) => row.member_id).sort()) === JSON.stringify(current);
        recordedSince = recorded ? (recordedSince ?? Date.now()) : undefined;
        return recordedSince !== undefined && Date.now() - recordedSince >= 2_000;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );

    killed.kill('SIGKILL');
    await killed.exited;
    // The killed member's session has 60 s to run: only its removal gives the survivor every partition sooner.
    const after = await settled('the survivor alone in every group', [survivor], [survivorName]).catch(async (err: Error) => {
      const tables = await db.query('SELECT p.lock_id, p.pid, p.locked_at, m.consumer, m.group_id, m.member_id FROM gateway_processes p LEFT JOIN gateway_process_members m USING (lock_id)');
      const groups = await groupsOf(admin, env.id);
      throw new Error(`${err.message}\nthe survivor's output:\n${survivor.output()}\nthe killed one's:\n${killed.output()}\n${JSON.stringify(tables.rows)}\n${JSON.stringify(groups.map((g) => [g.groupId, g.state, g.members.map((m) => m.memberId)]))}`);
    });
    for (const group of after) expect(partitionsOf(memberOf(group, survivorName)!), group.groupId).toEqual(partitions.get(group.groupId));
    expect(survivor.output()).toContain('gateway processes died: their group members were removed');
    const metrics = await (await request(`http://127.0.0.1:${metricsPort}/metrics`)).body.text();
    const removed = Number(/^gateway_dead_process_members_total\{outcome="removed"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(removed, metrics).toBeGreaterThanOrEqual(after.length);
    // The dead process's row is gone with its members; the survivor's stays.
    const { rows } = await db.query<{ pid: number }>('SELECT pid FROM gateway_processes');
    expect(rows.map((row) => row.pid)).toEqual([survivor.child.pid]);

    // Stopped with SIGTERM, a process leaves its row behind it, not its lock for a peer to find.
    survivor.kill('SIGTERM');
    expect(await survivor.exited, survivor.output()).toBe(0);
    expect((await db.query('SELECT 1 FROM gateway_processes')).rowCount).toBe(0);
  }, 180_000);
});
