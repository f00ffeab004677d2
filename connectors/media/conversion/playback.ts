/** What the network needs, besides the bytes, to play a voice note. */
export interface VoiceNote {
  readonly kind: 'voice_note';
  /** Whole seconds, at least 1. */
  readonly seconds: number;
  /** 64 bars, 0 to 100 (see loudness.ts). */
  readonly waveform: Uint8Array;
}

/** What the network needs, besides the bytes, to show a sticker. */
export interface Sticker {
  readonly kind: 'sticker';
  readonly animated: boolean;
}

export type Playback = VoiceNote | Sticker;
/** The conversions media of a send can go through: to a voice note, or to a sticker. */
export type Conversion = Playback['kind'];
export type PlaybackOf<C extends Conversion> = Extract<Playback, { kind: C }>;

/** A converted file, ready to store. */
export interface Converted<P extends Playback = Playback> {
  readonly file: string;
  readonly mimeType: string;
  /** What a file name of this type ends with (`ogg`, `webp`). */
  readonly extension: string;
  readonly playback: P;
}

/** What one conversion may use: the work folder, ffmpeg, and its end (aborted at the deadline). */
export interface ConversionJob {
  readonly input: string;
  readonly workDir: string;
  readonly ffmpegPath: string;
  readonly signal: AbortSignal;
  /** Epoch milliseconds at which `signal` aborts. */
  readonly deadline: number;
}
