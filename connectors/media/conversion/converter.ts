// The conversions of one process, bounded: a few run at once (each is CPU work), a few more may
// wait, and each has one deadline, its wait included, past which its ffmpeg or sharp is stopped.
import PQueue from 'p-queue';
import { MediaError } from '../errors.js';
import { FfmpegFailure } from './ffmpeg.js';
import type { Conversion, ConversionJob, Converted, PlaybackOf } from './playback.js';
import { toSticker } from './sticker.js';
import { toVoiceNote, VOICE_NOTE_MAX_SECONDS } from './voice-note.js';

export interface MediaConverterOptions {
  /** Debian's ffmpeg, or a path to one. */
  readonly ffmpegPath: string;
  /** Conversions running at once in this process. */
  readonly concurrency: number;
  /** Longest a conversion may take, its wait for a free slot included. */
  readonly timeoutMs: number;
  /** Defaults to VOICE_NOTE_MAX_SECONDS (tests shorten it). */
  readonly voiceNoteMaxSeconds?: number;
  /** Told when a conversion cannot run for a reason of ours (no ffmpeg): an operator must act. */
  readonly onUnavailable?: (error: Error) => void;
}

export interface MediaConverter {
  /**
   * Runs `work` (fetch, convert and store one media) unless this process already has as many
   * under way as it takes (`concurrency` running, 8 times as many waiting): then
   * MediaError `unavailable`, before anything is fetched.
   */
  admit<T>(work: () => Promise<T>): Promise<T>;
  /** Converts the file `input` into `workDir`, waiting for a free slot. */
  convert<C extends Conversion>(conversion: C, input: string, workDir: string): Promise<Converted<PlaybackOf<C>>>;
}

const WAITING_PER_SLOT = 8;

export function createMediaConverter(options: MediaConverterOptions): MediaConverter {
  const slots = new PQueue({ concurrency: options.concurrency });
  const admissible = options.concurrency * (1 + WAITING_PER_SLOT);
  let admitted = 0;
  const seconds = Math.ceil(options.timeoutMs / 1000);
  const maxSeconds = options.voiceNoteMaxSeconds ?? VOICE_NOTE_MAX_SECONDS;
  const converters: { readonly [C in Conversion]: (job: ConversionJob) => Promise<Converted<PlaybackOf<C>>> } = {
    voice_note: (job) => toVoiceNote(job, maxSeconds),
    sticker: toSticker,
  };

  const unavailable = (error: unknown): unknown => {
    if (error instanceof FfmpegFailure && error.kind === 'missing') {
      options.onUnavailable?.(error);
      return MediaError.unavailable('media conversion is not available on this server', error);
    }
    return error;
  };

  return {
    async admit(work) {
      if (admitted >= admissible) throw MediaError.unavailable('too many media conversions are under way; try again shortly');
      admitted += 1;
      try {
        return await work();
      } finally {
        admitted -= 1;
      }
    },
    async convert(conversion, input, workDir) {
      const deadline = Date.now() + options.timeoutMs;
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        return await slots.add(() => converters[conversion]({ input, workDir, ffmpegPath: options.ffmpegPath, signal, deadline }), { signal });
      } catch (error) {
        if (signal.aborted) throw MediaError.unavailable(`the media could not be converted within ${seconds} s; try again shortly`, error);
        throw unavailable(error);
      }
    },
  };
}
