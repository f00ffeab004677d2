// Real media made for tests by Debian's ffmpeg (which the conversions need anyway): audio from
// ffmpeg's own signal generators, encoded as a caller would send it.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ffmpegVersion } from '../../connectors/media/conversion/index.js';

const run = promisify(execFile);

/** Fails the suite with what to install when ffmpeg is missing, rather than skip anything. */
export async function requireFfmpeg(): Promise<void> {
  try {
    await ffmpegVersion('ffmpeg');
  } catch (error) {
    throw new Error("these tests need Debian's ffmpeg on the PATH: apt-get install ffmpeg (.ci/run installs it)", { cause: error });
  }
}

/** 3 seconds, mono: 1 s of silence, then 2 s of a 440 Hz tone at half scale. */
export const SILENCE_THEN_TONE = 'aevalsrc=exprs=if(lt(t\\,1)\\,0\\,0.5*sin(2*PI*440*t)):s=44100:d=3';

/** The encodings of the same sound a caller may send, as ffmpeg output options and a file name. */
export const AUDIO_ENCODINGS = {
  mp3: { file: 'sound.mp3', args: ['-c:a', 'libmp3lame', '-b:a', '64k'] },
  m4a: { file: 'sound.m4a', args: ['-c:a', 'aac', '-b:a', '64k', '-f', 'ipod'] },
  wav: { file: 'sound.wav', args: ['-c:a', 'pcm_s16le'] },
  vorbis: { file: 'sound-vorbis.ogg', args: ['-c:a', 'libvorbis'] },
  opus: { file: 'sound-opus.ogg', args: ['-c:a', 'libopus', '-b:a', '32k'] },
} as const;

/** Writes `dir/file` from a lavfi source (`sine=...`, `aevalsrc=...`, `testsrc=...`) encoded with `args`; returns its path. */
export async function synthesize(dir: string, file: string, source: string, args: readonly string[]): Promise<string> {
  const target = path.join(dir, file);
  await run('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', source, ...args, target]);
  return target;
}
