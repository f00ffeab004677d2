// What the benches share: child processes of the built CLI, waiting on a condition, percentiles.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { request } from 'undici';
import { loadConfig } from '../stack/config.js';
import { ROLE_FLAGS } from '../stack/node-flags.js';
import { stackUp } from '../stack/local/index.js';
import { createKafka, removePrefixed } from '../topics/index.js';
import { pino } from 'pino';

export function percentiles(values: readonly number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * Starts `node <args>` with `childFlags`; its stdout is piped for readers, or ignored. With
 * `BENCH_PROFILE=<dir>` each child writes a V8 CPU profile there when it exits (open it in Chrome's DevTools).
 */
export function start(args: readonly string[], env: Record<string, string>, stdout: 'pipe' | 'ignore' = 'pipe'): ChildProcess {
  return spawn(process.execPath, [...childFlags(), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'inherit'] });
}

/**
 * Node's flags for a child: those the roles run with in production (`ROLE_FLAGS`, the baselines
 * too, so both sides collect garbage alike) unless `BENCH_ROLE_FLAGS` gives others (empty: V8's
 * defaults), and with `BENCH_PROFILE` a CPU profile written there as it exits.
 */
export function childFlags(): string[] {
  const roleFlags = process.env.BENCH_ROLE_FLAGS === undefined ? ROLE_FLAGS : process.env.BENCH_ROLE_FLAGS.split(' ').filter(Boolean);
  return [...roleFlags, ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [])];
}

/**
 * CPU time (user and system, in ms) a process has used so far, from /proc (Linux); NaN where
 * /proc is missing. Read before and after a run, it gives what the run cost each role.
 */
export function cpuMs(pid: number | undefined): number {
  try {
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th, in clock ticks (100 a second).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/**
 * A memory figure of a process from /proc (Linux), in MB: `VmRSS` what it holds resident now,
 * `VmHWM` the most it has held so far; NaN where /proc is missing.
 */
export function memoryMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Runs `node <args>` to its end and answers the last line it printed. */
export async function run(args: readonly string[], env: Record<string, string>): Promise<string> {
  const child = start(args, env);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${String(code)}`);
  return out.trim().split('\n').pop()!;
}

/** Polls `condition` (a throw counts as false) until it holds, or fails after `timeoutMs`. */
export async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 120_000, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(condition).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export async function withPg(url: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Runs a bench's main and exits with its outcome (child processes and clients may hold the loop
 * open). A SIGTERM exits too, as a baseline child is stopped: by `process.exit`, so that its CPU
 * profile (`BENCH_PROFILE`) is written, which Node's default end on a signal skips.
 */
export function runMain(main: () => Promise<void>): void {
  process.once('SIGTERM', () => process.exit(143));
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/**
 * A slice of the local stack of the bench's own (started if down): a new database and a topic
 * prefix, as the environment of the gateway processes it starts (in development mode: they run the
 * sandbox); `dispose` removes both. Their logs are at `warn` unless `BENCH_LOG_LEVEL` says otherwise.
 */
export async function benchSlice(label: string): Promise<{ id: string; env: Record<string, string>; dispose(): Promise<void> }> {
  const config = loadConfig();
  await stackUp({ root: config.stackRoot });
  const id = `${label}${Date.now().toString(36)}`;
  const database = new URL(config.databaseUrl);
  database.pathname = `/gateway_${id}`;
  const admin = new URL(config.databaseUrl);
  admin.pathname = '/postgres';
  await withPg(admin.toString(), (c) => c.query(`CREATE DATABASE gateway_${id}`));
  return {
    id,
    env: { GATEWAY_MODE: 'development', DATABASE_URL: database.toString(), KAFKA_TOPIC_PREFIX: `${id}.`, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', LOG_FORMAT: 'json' },
    /** Removes the slice's topics, registry subjects and database. */
    async dispose() {
      await removePrefixed(createKafka(config.kafka, pino({ level: 'silent' })), config.schemaRegistryUrl, `${id}.`);
      await withPg(admin.toString(), (c) => c.query(`DROP DATABASE IF EXISTS gateway_${id} WITH (FORCE)`));
    },
  };
}

/**
 * Recipients the sandbox delivers to and reads on: none ends in 0000 (its sends always fail) or
 * 0404 (it has blocked every number), so every send of a bench reaches its `read`.
 */
export function deliverableCustomers(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `+55119${String(20_000_001 + i * 10)}`);
}

/** Waits until the gateway's API answers with its `count` sandbox numbers all connected. */
export async function numbersConnected(gateway: string, auth: Record<string, string>, count = 4): Promise<void> {
  await until(`the gateway and its ${count} connected numbers`, async () => {
    const response = await request(`${gateway}/instances`, { headers: auth }).catch(() => undefined);
    if (!response) return false;
    if (response.statusCode !== 200) return (await response.body.dump(), false);
    const { data } = (await response.body.json()) as { data: Array<{ status: string }> };
    return data.length === count && data.every((n) => n.status === 'connected');
  });
}
