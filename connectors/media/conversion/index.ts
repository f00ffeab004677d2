export { createMediaConverter, type MediaConverter, type MediaConverterOptions } from './converter.js';
export { ffmpegVersion, FfmpegFailure } from './ffmpeg.js';
export type { Conversion, Converted, Playback, PlaybackOf, Sticker, VoiceNote } from './playback.js';
export { STICKER_MIME_TYPE, STICKER_SIDE } from './sticker.js';
export { VOICE_NOTE_MAX_SECONDS, VOICE_NOTE_MIME_TYPE } from './voice-note.js';
