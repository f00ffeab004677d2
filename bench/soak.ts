/**
 * Soak benchmark: does the memory of each role level off under a steady load?
 * Every role runs as its own process on a test prefix and database; the api takes a steady rate of
 * `POST /messages/text` spread over 4 sandbox numbers (receipts at once, so each send also brings
 * `delivered` and `read` facts) while customers write to the numbers (inbound messages through the
 * sandbox's `customer-messages` control), and one webhook posts every event to a local receiver.
 * The RSS of each role process is sampled every few seconds; the table gives the RSS after warm-up
 * and at the end, and the slope over the last 10 minutes (least squares; the second half of a run
 * shorter than 20 minutes), flat when under 1 MB/min.
 *
 *   npm run bench:soak                              (100 sends/s and 20 inbound/s for 30 minutes)
 *   npm run bench:soak -- --minutes 2 --rate 100 --inbound-rate 20
 *                                                   (or SOAK_MINUTES, SOAK_RATE, SOAK_INBOUND_RATE, SOAK_SAMPLE_SECONDS)
 *   npm run bench:soak -- --heap-snapshots          also a heap snapshot of each role after warm-up
 *                                                   and at the end, to compare (e.g. in Chrome's DevTools)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { repoRoot } from '../shared/repo-root.js';
import { benchSlice, deliverableCustomers, memoryMb, numbersConnected, childFlags, run, runMain, stop, until } from './support.js';

const { values: flags } = parseArgs({
  options: {
    minutes: { type: 'string' },
    rate: { type: 'string' },
    'inbound-rate': { type: 'string' },
    'sample-seconds': { type: 'string' },
    'heap-snapshots': { type: 'boolean' },
  },
});
const MINUTES = Number(flags.minutes ?? process.env.SOAK_MINUTES ?? 30);
const RATE = Number(flags.rate ?? process.env.SOAK_RATE ?? 100);
const INBOUND_RATE = Number(flags['inbound-rate'] ?? process.env.SOAK_INBOUND_RATE ?? 20);
/** The slope is read over this last part of the run, the memory of a warmed-up process. */
const SLOPE_MINUTES = Math.min(10, MINUTES / 2);
const SAMPLE_SECONDS = Number(flags['sample-seconds'] ?? process.env.SOAK_SAMPLE_SECONDS ?? 5);
/** A slope under this is flat: 1 MB/min is 1.4 GB a day, but the noise of a 5-minute run is near it. */
const FLAT_MB_PER_MIN = 1;
/** The sweeper has no work in this version: it is left out. */
const ROLES = ['api', 'processor', 'connector', 'dispatcher'] as const;
type Role = (typeof ROLES)[number];
const cli = path.join(repoRoot, 'dist', 'stack', 'cli.js');

interface Sample {
  readonly minutes: number;
  readonly rss: Record<Role, number>;
}

/** Ctrl-C ends the load early: the table is printed for what ran, and the test prefix is removed. */
let interrupted = false;
process.once('SIGINT', () => (interrupted = true));
process.once('SIGTERM', () => (interrupted = true));

async function main(): Promise<void> {
  const slice = await benchSlice('soak');
  const { id } = slice;
  /** Embedded ClickHouse takes a lock on its folder: one folder per process. */
  const chdbPath = (role: string) => path.join(tmpdir(), `${id}-chdb-${role}`);
  const port = 3900 + Math.floor(Math.random() * 90);
  const env = { ...slice.env, ALLOW_PRIVATE_NETWORK: 'true', PORT: String(port) };
  let delivered = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const children = new Map<Role, ChildProcess>();
  try {
    const account = JSON.parse(
      await run([cli, 'accounts', 'create', '--name', 'Soak', '--email', 'soak@gateway.local', '--sandbox-numbers', '4', '--plan', 'scale', '--json'], { ...env, CHDB_PATH: chdbPath('accounts') }),
    ) as { api_key: string; instance_ids: string[] };
    // Their logs (warnings and errors only) go to a file: a pipe nobody reads would stall them.
    const logFile = path.join(tmpdir(), `${id}-roles.log`);
    const log = openSync(logFile, 'a');
    const snapshots = flags['heap-snapshots'] ? path.join(tmpdir(), `${id}-heap`) : undefined;
    if (snapshots) mkdirSync(snapshots);
    const nodeFlags = [...childFlags(), ...(snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : [])];
    for (const role of ROLES) {
      const roleEnv = { ...process.env, ...env, CHDB_PATH: chdbPath(role) };
      children.set(role, spawn(process.execPath, [...nodeFlags, cli, role], { env: roleEnv, stdio: ['ignore', log, log] }));
    }
    const gateway = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' };
    await numbersConnected(gateway, auth);
    for (const number of account.instance_ids) {
      await post(`${gateway}/sandbox/instances/${number}/behaviour`, auth, { delivered_after_ms: 0, read_after_ms: 0 });
    }
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await post(`${gateway}/webhooks`, auth, { url: receiverUrl });

    const customers = deliverableCustomers(1_000);
    const pool = new Pool(gateway, { connections: 16 });
    let n = 0;
    const sends = { accepted: 0, refused: 0 };
    const inbound = { accepted: 0, refused: 0 };
    const samples: Sample[] = [];
    const durationMs = MINUTES * 60_000;
    const warmUpMinutes = Math.min(1, MINUTES / 4);
    let snapshotsTaken = 0;
    const snapshot = () => {
      if (!snapshots) return;
      snapshotsTaken += ROLES.length;
      for (const child of children.values()) child.kill('SIGUSR2');
    };
    console.log(`soak: ${RATE} sends/s and ${INBOUND_RATE} inbound messages/s for ${MINUTES} min, RSS of ${ROLES.join(', ')} every ${SAMPLE_SECONDS} s; role logs in ${logFile}`);
    const started = performance.now();
    const sampler = setInterval(() => {
      const minutes = (performance.now() - started) / 60_000;
      const rss = Object.fromEntries(ROLES.map((role) => [role, memoryMb(children.get(role)!.pid, 'VmRSS')])) as Record<Role, number>;
      samples.push({ minutes, rss });
      if (minutes >= warmUpMinutes && snapshotsTaken === 0) snapshot();
      if (samples.length % Math.max(1, Math.round(60 / SAMPLE_SECONDS)) === 0) {
        const line = ROLES.map((role) => `${role} ${rss[role].toFixed(0)}`).join('  ');
        console.log(`  ${minutes.toFixed(1).padStart(5)} min  RSS MB: ${line}  (sends ${sends.accepted}, refused ${sends.refused}; inbound ${inbound.accepted}, refused ${inbound.refused}; webhooks ${delivered})`);
      }
    }, SAMPLE_SECONDS * 1_000);
    const tickMs = 100;
    const perTick = (RATE * tickMs) / 1_000;
    const inboundPerTick = (INBOUND_RATE * tickMs) / 1_000;
    const fire = (path: string, body: unknown, counted: { accepted: number; refused: number }) =>
      pool.request({ method: 'POST', path, headers: auth, body: JSON.stringify(body) }).then(
        async (response) => {
          await response.body.dump();
          if (response.statusCode === 202) counted.accepted++;
          else counted.refused++;
        },
        () => counted.refused++,
      );
    for (let tick = 0; performance.now() - started < durationMs && !interrupted; tick++) {
      const wait = started + tick * tickMs - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      for (let i = 0; i < perTick; i++) {
        n++;
        void fire('/messages/text', { to: customers[n % customers.length], body: `Your order ${n} is on its way.`, client_reference: `order-${n}` }, sends);
      }
      // Fractional rates carry over: 5 a second at 100 ms ticks is one every other tick.
      for (let i = Math.floor(tick * inboundPerTick); i < Math.floor((tick + 1) * inboundPerTick); i++) {
        const number = account.instance_ids[i % account.instance_ids.length]!;
        const from = customers[i % customers.length]!;
        void fire(`/sandbox/instances/${number}/customer-messages`, { from, content: { type: 'text', body: `Where is my order ${i}?` } }, inbound);
      }
    }
    clearInterval(sampler);
    await pool.close();
    if (snapshots) {
      snapshot();
      await until('the heap snapshots', async () => (await snapshotsWritten(snapshots)) === snapshotsTaken, 300_000);
      console.log(`heap snapshots (after warm-up, at the end; by process id): ${snapshots}`);
    }
    for (const [role, child] of children) {
      if (child.exitCode !== null) throw new Error(`the ${role} role exited (${String(child.exitCode)}) during the run`);
    }
    report(samples, { sends, inbound, delivered });
  } finally {
    await Promise.all([...children.values()].map(stop));
    receiver.close();
    await slice.dispose();
    for (const role of ['accounts', ...ROLES]) rmSync(chdbPath(role), { recursive: true, force: true });
  }
}

/** Snapshots whose file has stopped growing: Node writes them in place. */
async function snapshotsWritten(dir: string): Promise<number> {
  const sizes = () => readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot')).map((f) => statSync(path.join(dir, f)).size);
  const before = sizes();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const after = sizes();
  return after.length === before.length && after.every((size, i) => size > 0 && size === before[i]) ? after.length : 0;
}

type Counted = { readonly accepted: number; readonly refused: number };

function report(samples: readonly Sample[], counts: { sends: Counted; inbound: Counted; delivered: number }): void {
  const end = samples[samples.length - 1]!.minutes;
  const warmUp = Math.min(1, MINUTES / 4);
  const afterWarmUp = samples.find((s) => s.minutes >= warmUp)!;
  const lastPart = samples.filter((s) => s.minutes >= end - SLOPE_MINUTES);
  console.log(
    `${counts.sends.accepted} sends accepted, ${counts.sends.refused} refused; ${counts.inbound.accepted} inbound messages written, ` +
      `${counts.inbound.refused} refused; ${counts.delivered} webhook deliveries`,
  );
  const slopeHeading = `slope last ${Number(SLOPE_MINUTES.toFixed(1))} min`;
  console.log(`role        RSS at ${warmUp.toFixed(1)} min   at ${end.toFixed(1)} min   peak   ${slopeHeading.padStart(16)}   flat (< ${FLAT_MB_PER_MIN} MB/min)`);
  for (const role of ROLES) {
    const slope = leastSquaresSlope(lastPart.map((s) => [s.minutes, s.rss[role]]));
    const peak = Math.max(...samples.map((s) => s.rss[role]));
    console.log(
      `${role.padEnd(11)} ${mb(afterWarmUp.rss[role]).padStart(13)} ${mb(samples[samples.length - 1]!.rss[role]).padStart(11)} ${mb(peak).padStart(8)}` +
        ` ${`${slope.toFixed(2)} MB/min`.padStart(16)}   ${slope < FLAT_MB_PER_MIN ? 'yes' : 'NO'}`,
    );
  }
}

function leastSquaresSlope(points: ReadonlyArray<readonly [number, number]>): number {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const mx = mean(points.map(([x]) => x));
  const my = mean(points.map(([, y]) => y));
  const num = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const den = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

const mb = (value: number) => `${value.toFixed(0)} MB`;

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const response = await request(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`POST ${url}: ${response.statusCode} ${text}`);
}

runMain(main);
