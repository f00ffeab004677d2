import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Layout } from './layout.js';
import { isAlive, type Log } from './processes.js';

// Long enough for another process's first start, which downloads a few hundred MB.
const WAIT_MS = 15 * 60_000;

/** Runs `fn` holding `<root>/run/stack.lock`, so two processes never start or stop services at once. */
export async function withLock<T>(l: Layout, log: Log, fn: () => Promise<T>): Promise<T> {
  mkdirSync(l.run, { recursive: true });
  const file = path.join(l.run, 'stack.lock');
  const deadline = Date.now() + WAIT_MS;
  let announced = false;
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(file);
    // An empty file is a lock being written right now, not a stale one.
    if (holder !== undefined && !isAlive(holder)) {
      if (holderOf(file) === holder) rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${file}, held by pid ${holder ?? '?'}`);
    if (!announced) log(`waiting for another stack command (pid ${holder ?? '?'}) to finish`);
    announced = true;
    await sleep(250);
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
