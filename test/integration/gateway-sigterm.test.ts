import type { Admin } from 'kafkajs';
import { pino } from 'pino';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { freePort, spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { groupsOf } from '../support/groups.js';
import { createKafka } from '../../topics/index.js';

const RATE_PER_10_MS = 10;
const LOAD_MS = 10_000;


/**
 * A gateway running every role, stopped with SIGTERM right after a steady 1,000 sends/s whose
 * receipts are still being written, stops by itself. It did not: the connector's commit of a
 * batch's offsets and its leave of the group never settled, then a receipt's write, and the
 * process waited until it was killed (bench:send never ended).
 */
describe('a gateway stopped with SIGTERM under load', () => {
  let env: TestEnv;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    env = await createTestEnv();
  });

  afterAll(async () => {
    gateway?.child.kill('SIGKILL');
    await gateway?.exited;
    await env?.dispose();
  });

  it('exits by itself once its roles have stopped', async () => {
    const created = spawnGateway(['accounts', 'create', '--name', 'Stop', '--email', 'stop@gateway.test', '--sandbox-numbers', '4', '--plan', 'scale', '--json'], env.env);
    expect(await created.exited, created.output()).toBe(0);
    const account = JSON.parse(created.stdout().trim().split('\n').pop()!) as { api_key: string; instance_ids: string[] };
    const port = await freePort();
    gateway = spawnGateway(['all'], { ...env.env, PORT: String(port), HOST: '127.0.0.1' });
    const running = gateway;
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 64 });
    const headers = { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' };
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const response = await pool.request({ method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
    };
    try {
      await waitFor('the numbers connected', async () => {
        running.assertRunning();
        const listed = await call('GET', '/instances').catch(() => undefined);
        const data = (listed?.body.data ?? []) as Array<{ status: string }>;
        return (data.length === 4 && data.every((n) => n.status === 'connected')) || undefined;
      }, { timeoutMs: 120_000, intervalMs: 200 });
      for (const id of account.instance_ids) await call('POST', `/sandbox/instances/${id}/behaviour`, { delivered_after_ms: 0, read_after_ms: 0 });

      // A steady 1,000 sends/s, paced by the clock like a client's traffic.
      let accepted = 0;
      const inFlight: Promise<void>[] = [];
      const started = performance.now();
      for (let tick = 0, n = 0; performance.now() - started < LOAD_MS; tick++) {
        const wait = started + tick * 10 - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        for (let i = 0; i < RATE_PER_10_MS; i++, n++) {
          const body = { to: `+55119${String(10_000_000 + (n % 1_000))}`, body: `Order ${n} is on its way.` };
          inFlight.push(call('POST', '/messages/text', body).then((r) => void (r.status === 202 && accepted++), () => undefined));
        }
      }
      await Promise.all(inFlight);
      expect(accepted).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
    running.child.kill('SIGTERM');
    const exit = await waitFor('the gateway exits', () => running.child.exitCode ?? running.child.signalCode ?? undefined, { timeoutMs: 120_000 });
    expect(exit, running.output().slice(-2_000)).toBe(0);
  }, 300_000);
});

/**
 * A processor stopped with SIGTERM while it is still joining its consumer groups (a deploy that
 * replaces a process just started) finishes starting, leaves every group and exits with 0. It
 * used to end at once, as if killed: the groups it had joined kept it as a member for a whole
 * session, their partitions held by nobody.
 */
describe('a role stopped with SIGTERM while it starts', () => {
  let env: TestEnv;
  let admin: Admin;
  let role: GatewayProcess | undefined;

  beforeAll(async () => {
    env = await createTestEnv();
    admin = createKafka(env.config.kafka, pino({ level: 'silent' })).admin();
    await admin.connect();
  });

  afterAll(async () => {
    role?.child.kill('SIGKILL');
    await role?.exited;
    await admin?.disconnect();
    await env?.dispose();
  });

  /** The members of the test's consumer groups, by group. */
  const members = async () => new Map((await groupsOf(admin, env.id)).map((g) => [g.groupId, g.members.length]));

  it('leaves the groups it joined and exits with 0', async () => {
    role = spawnGateway(['processor'], env.env);
    const running = role;
    const joined = await waitFor('the processor in its first group', async () => {
      running.assertRunning();
      const now = await members();
      return [...now.values()].some((count) => count > 0) ? now : undefined;
    }, { timeoutMs: 120_000, intervalMs: 20 });
    running.kill('SIGTERM');
    expect(await running.exited, running.output().slice(-2_000)).toBe(0);
    const after = await members();
    expect([...after].filter(([, count]) => count > 0), `groups joined when it was stopped: ${[...joined.keys()].join(', ')}`).toEqual([]);
  }, 180_000);
});

/**
 * A role whose broker cannot be reached, stopped with SIGTERM while it tries to connect, exits at
 * once with 0: it has joined no group, so there is nothing to leave. It used to wait out the
 * client's retries (about a minute), then exit with 1 as if the start had failed.
 */
describe('a role stopped with SIGTERM while its broker cannot be reached', () => {
  let env: TestEnv;
  let role: GatewayProcess | undefined;

  beforeAll(async () => {
    env = await createTestEnv();
  });

  afterAll(async () => {
    role?.child.kill('SIGKILL');
    await role?.exited;
    await env?.dispose();
  });

  it('exits with 0 without waiting for the broker', async () => {
    const closed = await freePort();
    role = spawnGateway(['processor'], { ...env.env, KAFKA_BROKERS: `127.0.0.1:${closed}`, LOG_LEVEL: 'info' });
    const running = role;
    await waitFor('a refused connection to the broker', () => {
      running.assertRunning();
      return running.output().includes('ECONNREFUSED') || undefined;
    }, { timeoutMs: 60_000, intervalMs: 50 });
    running.kill('SIGTERM');
    const exit = await waitFor('the role exits', () => running.child.exitCode ?? running.child.signalCode ?? undefined, { timeoutMs: 20_000 });
    expect(exit, running.output().slice(-2_000)).toBe(0);
    // The exit can come before the pipe's last lines.
    await waitFor('the stop logged', () => running.output().includes('stopped while connecting') || undefined, { timeoutMs: 5_000 });
  }, 120_000);
});
