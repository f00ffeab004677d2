import { spawn } from 'node:child_process';

/**
 * V8 flags a command needs that only take effect when the process starts (the heap's sizes).
 * A replay allocates an object per record decoded and drops it at once: a young generation of
 * 64 MB instead of 16-32 cuts its garbage collection by about a third.
 */
export const REPLAY_FLAGS = ['--max-semi-space-size=64'];

/**
 * The flags the roles run with (`npm start`, `npm run gateway`; docs/operations.md): a semi-space
 * of 32 MB instead of V8's 16. Garbage collection took a fifth of a busy processor's main thread,
 * and about 15% with this young generation (CPU profiles, bench:send). At 1,000 sends/s with every
 * role in one process, 202 → delivered fact p50 was 123-174 ms over nine runs without it (median
 * 154) and 72-166 ms over seven with it (median 110); peak RSS did not move beyond its noise.
 */
export const ROLE_FLAGS = ['--max-semi-space-size=32'];

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
