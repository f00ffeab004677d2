// One run of Debian's ffmpeg: arguments as an array (no shell ever sees them), killed by the
// caller's signal, its error output kept short for the message the caller gets.
import { spawn } from 'node:child_process';

/** Why a run of ffmpeg gave no result. */
export const FfmpegFailureKinds = ['missing', 'failed', 'aborted'] as const;
export type FfmpegFailureKind = (typeof FfmpegFailureKinds)[number];

export class FfmpegFailure extends Error {
  override readonly name = 'FfmpegFailure';

  constructor(
    readonly kind: FfmpegFailureKind,
    message: string,
    cause?: unknown,
  ) {
    super(message, { cause });
  }
}

export interface FfmpegRun {
  readonly ffmpegPath: string;
  readonly args: readonly string[];
  /** Aborting kills ffmpeg (SIGKILL) and fails the run as `aborted`. */
  readonly signal: AbortSignal;
  /** Each chunk ffmpeg writes to its standard output. */
  readonly onStdout?: (chunk: Buffer) => void;
}

/** ffmpeg's last words are enough to say what was wrong with the input. */
const STDERR_KEPT = 2048;

/** The last non-empty line ffmpeg wrote to its error output. */
function lastLine(stderr: string): string {
  return stderr.trim().split('\n').pop()?.trim() ?? '';
}

/** Runs ffmpeg to its end; rejects with an FfmpegFailure unless it exits 0. */
export function runFfmpeg(run: FfmpegRun): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    const child = spawn(run.ffmpegPath, run.args, { stdio: ['ignore', 'pipe', 'pipe'], signal: run.signal, killSignal: 'SIGKILL' });
    child.stdout.on('data', (chunk: Buffer) => run.onStdout?.(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') reject(new FfmpegFailure('missing', `ffmpeg was not found at ${run.ffmpegPath}`, error));
      else if (error.name === 'AbortError') reject(new FfmpegFailure('aborted', 'ffmpeg was stopped', error));
      else reject(new FfmpegFailure('failed', `ffmpeg could not run: ${error.message}`, error));
    });
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else if (run.signal.aborted) reject(new FfmpegFailure('aborted', 'ffmpeg was stopped'));
      else reject(new FfmpegFailure('failed', lastLine(stderr) || `ffmpeg ended with ${signal ?? `exit code ${code}`}`));
    });
  });
}

/** The first line of `ffmpeg -version`, or an FfmpegFailure: tells an operator at start whether voice notes can work. */
export async function ffmpegVersion(ffmpegPath: string): Promise<string> {
  let out = '';
  await runFfmpeg({ ffmpegPath, args: ['-version'], signal: AbortSignal.timeout(10_000), onStdout: (chunk) => (out += chunk.toString('utf8')) });
  return out.split('\n')[0] ?? '';
}
