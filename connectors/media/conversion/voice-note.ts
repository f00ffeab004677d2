// Any audio ffmpeg reads → a voice note as the network plays it: Opus in OGG, mono, with its
// duration and waveform. Audio that is already Opus in OGG is kept as it is (no re-encode) and
// only measured.
import path from 'node:path';
import { fileTypeFromFile } from 'file-type';
import { MediaError } from '../errors.js';
import { FfmpegFailure, runFfmpeg } from './ffmpeg.js';
import { LoudnessMeter, MEASURE_RATE } from './loudness.js';
import type { ConversionJob, Converted, VoiceNote } from './playback.js';

/** The longest voice note the gateway converts (our cap; the network sets none it tells). */
export const VOICE_NOTE_MAX_SECONDS = 30 * 60;
export const VOICE_NOTE_MIME_TYPE = 'audio/ogg; codecs=opus';

/**
 * The demuxers ffmpeg may use on a caller's file: MP3, MP4/M4A/3GP, AAC, WAV, OGG, FLAC,
 * Matroska/WebM, AMR. Nothing else: playlists (HLS, concat) could make it read other files.
 */
const AUDIO_FORMATS = 'mp3,mov,aac,wav,ogg,flac,matroska,amr';

/** Voice, as the apps record it: mono Opus for speech at 32 kbit/s. */
const OPUS_OUTPUT = ['-map', '0:a:0', '-map_metadata', '-1', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip', '-f', 'ogg'];

export async function toVoiceNote(job: ConversionJob, maxSeconds = VOICE_NOTE_MAX_SECONDS): Promise<Converted<VoiceNote>> {
  const alreadyOpus = (await fileTypeFromFile(job.input))?.mime === VOICE_NOTE_MIME_TYPE;
  const output = alreadyOpus ? job.input : path.join(job.workDir, 'voice-note.ogg');
  const meter = new LoudnessMeter();
  const args = [
    ...['-nostdin', '-hide_banner', '-loglevel', 'error', '-n', '-threads', '1'],
    ...['-protocol_whitelist', 'file', '-format_whitelist', AUDIO_FORMATS],
    // Reading stops one second past the cap: a longer file is refused without decoding it whole.
    ...['-t', String(maxSeconds + 1), '-i', job.input],
    ...(alreadyOpus ? [] : [...OPUS_OUTPUT, output]),
    ...['-map', '0:a:0', '-ac', '1', '-ar', String(MEASURE_RATE), '-f', 'f32le', 'pipe:1'],
  ];
  try {
    await runFfmpeg({ ffmpegPath: job.ffmpegPath, args, signal: job.signal, onStdout: (chunk) => meter.push(chunk) });
  } catch (error) {
    if (error instanceof FfmpegFailure && error.kind === 'failed') {
      const reason = error.message.replaceAll(job.input, 'input');
      throw MediaError.invalidInput(`the media is not audio that can become a voice note (${reason})`, error);
    }
    throw error;
  }
  if (meter.sampleCount === 0) throw MediaError.invalidInput('the media has no sound to make a voice note of');
  if (meter.seconds > maxSeconds) throw MediaError.overCap(`the voice note plays longer than ${maxSeconds} s`, maxSeconds % 60 === 0 ? `${maxSeconds / 60} min` : `${maxSeconds} s`);
  return {
    file: output,
    mimeType: VOICE_NOTE_MIME_TYPE,
    extension: 'ogg',
    playback: { kind: 'voice_note', seconds: Math.max(1, Math.round(meter.seconds)), waveform: meter.waveform() },
  };
}
