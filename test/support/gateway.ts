import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../stack/config.js';

export interface GatewayProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Everything the process printed, for failure messages. */
  output(): string;
  kill(signal: NodeJS.Signals): void;
}

/** Runs the built CLI (`dist/stack/cli.js`) as a separate process, as an operator would. */
export function spawnGateway(args: readonly string[], env: Record<string, string>): GatewayProcess {
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'stack', 'cli.js'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, exited, output: () => output, kill: (signal) => child.kill(signal) };
}
