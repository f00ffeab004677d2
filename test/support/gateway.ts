import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../shared/repo-root.js';
import { WaitAborted } from './env.js';

export interface GatewayProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Everything the process printed, for failure messages. */
  output(): string;
  /** What the process printed on stdout only: the part a caller parses (warnings go to stderr). */
  stdout(): string;
  /** Throws (with the output) once the process has ended: for conditions that wait on it. */
  assertRunning(): void;
  kill(signal: NodeJS.Signals): void;
}

let spawned = 0;

/** Runs the built CLI (`dist/stack/cli.js`) as a separate process, as an operator would. */
export function spawnGateway(args: readonly string[], env: Record<string, string>): GatewayProcess {
  // chDB locks its folder: each process of a test gets its own.
  const chdbPath = path.join(repoRoot, '.stack', 'test', `chdb-${process.pid}-${++spawned}`);
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'stack', 'cli.js'), ...args], {
    env: { ...process.env, CHDB_PATH: chdbPath, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      rmSync(chdbPath, { recursive: true, force: true });
      resolve(code ?? signal ?? -1);
    }),
  );
  return {
    child,
    exited,
    output: () => output,
    stdout: () => stdout,
    assertRunning() {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new WaitAborted(`gateway ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}):\n${output}`);
      }
    },
    kill: (signal) => child.kill(signal),
  };
}

/** A port nothing listens on now, for a gateway process's `PORT`. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
