import { spawn } from 'node:child_process';

/**
 * V8 flags a command needs that only take effect when the process starts (the heap's sizes).
 * A replay allocates an object per record decoded and drops it at once: a young generation of
 * 64 MB instead of 16-32 cuts its garbage collection by about a third. Pretenuring is off for the
 * reason given at `ROLE_FLAGS`: bench:replay's conversations replayed 39,669-44,933 records/s
 * without it, 36,217-41,209 with it (two runs each).
 */
export const REPLAY_FLAGS = ['--max-semi-space-size=64', '--no-allocation-site-pretenuring'];

/**
 * The flags the roles run with (`npm start`, `npm run gateway`; docs/operations.md):
 * - a semi-space of 32 MB instead of V8's 16. Garbage collection took a fifth of a busy
 *   processor's main thread, and about 15% with this young generation (CPU profiles, bench:send);
 * - no allocation-site pretenuring. When a young collection finds most objects of one allocation
 *   site alive (a batch's decoded records, still held while the batch is handled), V8 allocates
 *   that site's later objects straight in the old generation, where only major collections free
 *   them: a consumer then decoded at about 4 µs a record instead of 1.5, and stayed so. Without it,
 *   bench:log's serde consume read 331-384k records/s against 176-223k (three runs each).
 * `--no-allocation-site-pretenuring` is refused in NODE_OPTIONS: it goes on the command line.
 */
export const ROLE_FLAGS = ['--max-semi-space-size=32', '--no-allocation-site-pretenuring'];

/**
 * Runs this command again in a child Node process started with `flags`, unless this one was:
 * resolves to the child's exit code, or undefined when the flags are set here already.
 */
export function rerunWith(flags: readonly string[]): Promise<number> | undefined {
  if (flags.every((flag) => process.execArgv.includes(flag))) return undefined;
  const child = spawn(process.execPath, [...process.execArgv, ...flags, ...process.argv.slice(1)], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 0 : 1)));
  });
}
