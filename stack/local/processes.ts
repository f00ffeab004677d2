import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { reason } from './health.js';
import type { Layout } from './layout.js';
import { assertPortsFree, type Port } from './ports.js';

export type Log = (line: string) => void;

export interface ServiceStatus {
  up: boolean;
  address: string;
  pid?: number;
  detail?: string;
}

/** How to launch a service: arguments after `java`, and where. */
export interface Launch {
  readonly args: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** A service the stack runs as a detached `java` process that outlives the node process. */
export interface JvmService {
  readonly name: `kafka${string}` | 'registry' | 's3' | 'smtp';
  readonly address: string;
  readonly ports: readonly Port[];
  readonly startTimeoutMs: number;
  readonly stopTimeoutMs: number;
  /** Resolves when the service answers like a working one; rejects with the reason otherwise. */
  probe(): Promise<void>;
  /** Downloads, configuration files and one-time setup, run only when the service must start. */
  prepare(l: Layout, log: Log): Promise<Launch>;
}

export const logFile = (l: Layout, name: string): string => path.join(l.logs, `${name}.log`);
const pidFile = (l: Layout, name: string): string => path.join(l.run, `${name}.pid`);

/** Marks the command line of our processes, so that a recycled pid is never taken for ours. */
const marker = (l: Layout, name: string): string => `-Dgateway.stack=${name}@${l.root}`;

const java = (): string => (process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java');

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid of the live process this stack started for the service, if there is one. */
export function ownPid(l: Layout, name: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(l, name), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  if (!existsSync('/proc/self/cmdline')) return pid; // no procfs (macOS): the pid file is all there is
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker(l, name)) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Starts the service unless this stack runs it already, then waits until it is healthy. */
export async function ensureRunning(l: Layout, service: JvmService, log: Log): Promise<void> {
  const running = ownPid(l, service.name);
  if (running !== undefined) {
    await waitHealthy(l, service, running);
    return;
  }
  rmSync(pidFile(l, service.name), { force: true });
  // A working service already at the address (another checkout's stack, the user's own server) is used as it is.
  if (await service.probe().then(() => true, () => false)) {
    log(`${service.name}: using the service already answering at ${service.address}`);
    return;
  }
  await assertPortsFree(service.name, service.ports);
  const launch = await service.prepare(l, log);
  const started = Date.now();
  const pid = await spawnDetached(l, service.name, launch);
  log(`${service.name}: started pid ${pid}, waiting until healthy`);
  try {
    await waitHealthy(l, service, pid);
  } catch (error) {
    await stopPid(pid, service.stopTimeoutMs);
    rmSync(pidFile(l, service.name), { force: true });
    throw error;
  }
  log(`${service.name}: healthy at ${service.address} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Polls the service's probe until it passes; fails early if the process exits, or at the deadline. */
async function waitHealthy(l: Layout, service: JvmService, pid: number): Promise<void> {
  const deadline = Date.now() + service.startTimeoutMs;
  const log = logFile(l, service.name);
  for (;;) {
    let last: string;
    try {
      await service.probe();
      return;
    } catch (error) {
      last = reason(error);
    }
    if (!isAlive(pid)) throw new Error(`${service.name} exited while starting; ${log} ends with:\n${lastStart(log)}`);
    if (Date.now() > deadline) {
      throw new Error(`${service.name} not healthy after ${service.startTimeoutMs / 1000} s (${last}); see ${log}`);
    }
    await sleep(500);
  }
}

/** Stops what this stack started for the service: SIGTERM, then SIGKILL after its deadline. */
export async function stopService(l: Layout, service: JvmService, log: Log): Promise<void> {
  const pid = ownPid(l, service.name);
  if (pid !== undefined) {
    log(`${service.name}: stopping pid ${pid}`);
    if (await stopPid(pid, service.stopTimeoutMs)) {
      log(`${service.name}: still running after ${service.stopTimeoutMs / 1000} s, killed`);
    }
  }
  rmSync(pidFile(l, service.name), { force: true });
}

export async function serviceStatus(l: Layout, service: JvmService): Promise<ServiceStatus> {
  const pid = ownPid(l, service.name);
  const address = service.address;
  try {
    await service.probe();
    return pid === undefined ? { up: true, address, detail: 'answering, but not started by this stack' } : { up: true, address, pid };
  } catch (error) {
    return pid === undefined
      ? { up: false, address, detail: 'not running' }
      : { up: false, address, pid, detail: `running but not healthy: ${reason(error)}` };
  }
}

/** Runs a one-time java command to completion, its output appended to the service's log. */
export async function runJava(l: Layout, name: string, what: string, args: readonly string[]): Promise<void> {
  const out = openLog(l, name, what);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(java(), args, { stdio: ['ignore', out, out] });
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0) throw new Error(`${name}: ${what} failed (exit ${code}); see ${logFile(l, name)}`);
  } finally {
    closeSync(out);
  }
}

async function spawnDetached(l: Layout, name: string, launch: Launch): Promise<number> {
  const out = openLog(l, name, 'starting');
  try {
    const child = spawn(java(), [marker(l, name), ...launch.args], {
      cwd: launch.cwd,
      env: { ...process.env, ...launch.env },
      detached: true,
      stdio: ['ignore', out, out],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) => reject(new Error(`${name}: cannot run ${java()} (Java 17 or later is needed): ${error.message}`)));
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`${name}: java started without a pid`);
    writeFileSync(pidFile(l, name), `${child.pid}\n`);
    return child.pid;
  } finally {
    closeSync(out);
  }
}

const START_LINE = '\n--- ';

/** Opens the service's log for appending; logs survive restarts, with one older generation kept past 20 MB. */
function openLog(l: Layout, name: string, what: string): number {
  const file = logFile(l, name);
  if (existsSync(file) && statSync(file).size > 20_000_000) renameSync(file, `${file}.1`);
  const fd = openSync(file, 'a');
  writeSync(fd, `${START_LINE}${new Date().toISOString()} ${what}\n`);
  return fd;
}

/** The last lines the service wrote since it was last started. */
function lastStart(file: string): string {
  const size = statSync(file).size;
  const buffer = Buffer.alloc(Math.min(size, 8192));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
  } finally {
    closeSync(fd);
  }
  const text = buffer.toString('utf8');
  return text.slice(text.lastIndexOf(START_LINE) + 1).trimEnd().split('\n').slice(-20).join('\n');
}

/** Returns true when the process had to be killed. */
async function stopPid(pid: number, graceMs: number): Promise<boolean> {
  if (!signal(pid, 'SIGTERM')) return false;
  if (await exited(pid, graceMs)) return false;
  signal(pid, 'SIGKILL');
  await exited(pid, 5000);
  return true;
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

async function exited(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}
