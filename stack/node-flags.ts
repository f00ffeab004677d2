import { spawn } from 'node:child_process';

/**
 * V8 flags a command needs that only take effect when the process starts (the heap's sizes).
 * A replay allocates an object per record decoded and drops it at once: a young generation of
 * 64 MB instead of 16-32 cuts its garbage collection by about a third.
 */
export const REPLAY_FLAGS = ['--max-semi-space-size=64'];

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
