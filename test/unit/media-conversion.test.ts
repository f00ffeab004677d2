// Voice notes and stickers as the network plays them, converted from real files made here by
// ffmpeg and sharp: Opus in OGG with duration and waveform, WebP stickers of 512x512.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMediaConverter, type MediaConverter } from '../../connectors/media/conversion/index.js';
import { LoudnessMeter, MEASURE_RATE } from '../../connectors/media/conversion/loudness.js';
import { createMediaStore } from '../../connectors/media/create-store.js';
import { ingestMedia } from '../../connectors/media/ingest.js';
import type { MediaOwner } from '../../connectors/media/store.js';
import { ingestSendMedia } from '../../api/media/ingest.js';
import { asAccountId, asProjectId } from '../../schemas/ids.js';
import type { UsageRecord } from '../../schemas/records.js';
import { createMediaLinks } from '../../shared/media-links.js';
import { createHttpFetcher, type HttpFetcher } from '../../shared/http/fetch.js';
import { AUDIO_ENCODINGS, requireFfmpeg, SILENCE_THEN_TONE, synthesize } from '../support/media-samples.js';

const owner: MediaOwner = { accountId: asAccountId('acc_1'), projectId: asProjectId('prj_1'), instanceId: null };

/** WhatsApp Web's waveform over every sample (Baileys' getAudioWaveform): the reference. */
function referenceWaveform(samples: Float32Array): number[] {
  const blockSize = Math.floor(samples.length / 64);
  const means = Array.from({ length: 64 }, (_, i) => {
    let sum = 0;
    for (let j = 0; j < blockSize; j++) sum += Math.abs(samples[i * blockSize + j]!);
    return sum / blockSize;
  });
  const multiplier = Math.max(...means) ** -1;
  return means.map((mean) => Math.floor(100 * mean * multiplier));
}

/** The samples as ffmpeg writes them (f32le), pushed in chunks cut in the middle of samples. */
function measure(samples: Float32Array, chunkBytes = 4093): LoudnessMeter {
  const bytes = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const meter = new LoudnessMeter();
  for (let offset = 0; offset < bytes.length; offset += chunkBytes) meter.push(bytes.subarray(offset, offset + chunkBytes));
  return meter;
}

describe('the loudness meter', () => {
  it('draws the 64 bars WhatsApp Web draws, from samples cut anywhere', () => {
    // 2.5 s of speech-like bursts: a 300 Hz tone whose loudness rises and falls.
    const samples = Float32Array.from({ length: MEASURE_RATE * 2.5 }, (_, i) => {
      const t = i / MEASURE_RATE;
      return Math.sin(2 * Math.PI * 300 * t) * (0.2 + 0.8 * Math.abs(Math.sin(2 * Math.PI * 0.7 * t)));
    });
    const meter = measure(samples);
    expect(meter.seconds).toBe(2.5);
    const bars = [...meter.waveform()];
    expect(bars).toHaveLength(64);
    expect(Math.max(...bars)).toBe(100);
    // Within 3 of the reference: the meter keeps sums over 2.5 ms, not every sample, and shares a
    // bin cut by a block's edge in proportion.
    const reference = referenceWaveform(samples);
    bars.forEach((bar, i) => expect(Math.abs(bar - reference[i]!), `bar ${i}: ${bar} vs ${reference[i]}`).toBeLessThanOrEqual(3));
  });

  it('draws silence flat, and a sound shorter than a bin per bar', () => {
    expect([...measure(new Float32Array(MEASURE_RATE)).waveform()]).toEqual(new Array(64).fill(0));
    // 0.05 s: 6 samples a bar.
    const short = Float32Array.from({ length: 400 }, (_, i) => (i < 200 ? 0 : 0.5));
    expect([...measure(short, 6).waveform()]).toEqual(referenceWaveform(short));
  });
});

describe('media conversion', () => {
  let dir: string;
  let converter: MediaConverter;
  const inputs = new Map<keyof typeof AUDIO_ENCODINGS, string>();

  /** A work folder of its own for one conversion, as ingest gives each. */
  const workDir = () => mkdtemp(path.join(dir, 'work-'));

  beforeAll(async () => {
    await requireFfmpeg();
    dir = await mkdtemp(path.join(tmpdir(), 'media-conversion-test-'));
    for (const [name, { file, args }] of Object.entries(AUDIO_ENCODINGS)) {
      inputs.set(name as keyof typeof AUDIO_ENCODINGS, await synthesize(dir, file, SILENCE_THEN_TONE, args));
    }
    converter = createMediaConverter({ ffmpegPath: 'ffmpeg', concurrency: 2, timeoutMs: 60_000 });
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('voice notes', () => {
    it.each(['mp3', 'm4a', 'wav', 'vorbis'] as const)('converts %s to Opus in OGG, with its duration and waveform', async (encoding) => {
      const converted = await converter.convert('voice_note', inputs.get(encoding)!, await workDir());
      expect(converted.mimeType).toBe('audio/ogg; codecs=opus');
      expect(await fileTypeFromFile(converted.file)).toEqual({ ext: 'opus', mime: 'audio/ogg; codecs=opus' });
      const { seconds, waveform } = converted.playback;
      expect(seconds).toBe(3);
      expect(waveform).toHaveLength(64);
      // 1 s of silence is the first 21 bars of 64, 2 s of a steady tone the rest (the codecs' padding
      // at either end aside: AAC's last frame ends in silence).
      expect(Math.max(...waveform.subarray(0, 19))).toBeLessThanOrEqual(2);
      expect(Math.min(...waveform.subarray(24, 63))).toBeGreaterThanOrEqual(90);

      // What was stored plays as 3 s of the same sound: measured again, without a second encoding.
      const again = await converter.convert('voice_note', converted.file, await workDir());
      expect(again.file).toBe(converted.file);
      expect(again.playback.seconds).toBe(3);
      expect(Math.min(...again.playback.waveform.subarray(24, 63))).toBeGreaterThanOrEqual(90);
    });

    it('keeps Opus in OGG as it is, and measures it', async () => {
      const input = inputs.get('opus')!;
      const before = await readFile(input);
      const converted = await converter.convert('voice_note', input, await workDir());
      expect(converted.file).toBe(input);
      expect(await readFile(converted.file)).toEqual(before);
      expect(converted.playback.seconds).toBe(3);
      expect(Math.max(...converted.playback.waveform.subarray(0, 19))).toBeLessThanOrEqual(2);
    });

    it('refuses what is not audio, lists that name other files, and notes over the cap', async () => {
      const png = path.join(dir, 'picture.png');
      await sharp({ create: { width: 4, height: 4, channels: 3, background: '#f00' } }).png().toFile(png);
      await expect(converter.convert('voice_note', png, await workDir())).rejects.toMatchObject({
        kind: 'invalid_input',
        message: expect.stringMatching(/^the media is not audio that can become a voice note \(.+\)$/) as string,
      });
      // Lists naming other files (a sound beside the input): ffmpeg may open the caller's file and nothing else.
      for (const [file, text] of [
        ['list.ffconcat', `ffconcat version 1.0\nfile ${AUDIO_ENCODINGS.wav.file}\n`],
        ['list.m3u8', `#EXTM3U\n#EXT-X-TARGETDURATION:3\n#EXTINF:3,\n${AUDIO_ENCODINGS.wav.file}\n#EXT-X-ENDLIST\n`],
      ] as const) {
        await writeFile(path.join(dir, file), text);
        await expect(converter.convert('voice_note', path.join(dir, file), await workDir()), file).rejects.toMatchObject({ kind: 'invalid_input' });
      }

      const short = createMediaConverter({ ffmpegPath: 'ffmpeg', concurrency: 1, timeoutMs: 60_000, voiceNoteMaxSeconds: 2 });
      await expect(short.convert('voice_note', inputs.get('mp3')!, await workDir())).rejects.toMatchObject({ kind: 'too_large', limit: '2 s' });
    });
  });

  describe('stickers', () => {
    const pixel = async (file: string, x: number, y: number) => {
      const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      const at = (y * info.width + x) * info.channels;
      return { alpha: data[at + 3]!, width: info.width, height: info.height };
    };

    it.each([
      ['PNG', 'wide.png', (image: Sharp) => image.png()],
      ['JPEG', 'wide.jpg', (image: Sharp) => image.jpeg()],
    ] as const)('fits a %s into 512x512 WebP with transparent padding', async (_name, file, encode) => {
      const input = path.join(dir, file);
      await encode(sharp({ create: { width: 800, height: 400, channels: 3, background: '#1e90ff' } })).toFile(input);
      const converted = await converter.convert('sticker', input, await workDir());
      expect(converted).toMatchObject({ mimeType: 'image/webp', playback: { kind: 'sticker', animated: false } });
      expect(await fileTypeFromFile(converted.file)).toEqual({ ext: 'webp', mime: 'image/webp' });
      const metadata = await sharp(converted.file).metadata();
      expect(metadata).toMatchObject({ format: 'webp', width: 512, height: 512, hasAlpha: true });
      expect((await pixel(converted.file, 256, 10)).alpha).toBe(0); // the padding above
      expect((await pixel(converted.file, 256, 256)).alpha).toBe(255); // the picture
    });

    it('keeps an animated GIF and an animated WebP animated', async () => {
      const gif = await synthesize(dir, 'moving.gif', 'testsrc=size=320x240:rate=5:duration=2', []);
      const fromGif = await converter.convert('sticker', gif, await workDir());
      expect(fromGif.playback.animated).toBe(true);
      const gifSticker = await sharp(fromGif.file, { animated: true }).metadata();
      expect(gifSticker).toMatchObject({ format: 'webp', width: 512, pageHeight: 512, pages: 10 });
      expect(await fileTypeFromBuffer(await readFile(fromGif.file))).toEqual({ ext: 'webp', mime: 'image/webp' });

      const webp = path.join(dir, 'moving.webp');
      await sharp(gif, { animated: true }).webp().toFile(webp);
      const fromWebp = await converter.convert('sticker', webp, await workDir());
      expect(fromWebp.playback.animated).toBe(true);
      expect(await sharp(fromWebp.file, { animated: true }).metadata()).toMatchObject({ width: 512, pageHeight: 512, pages: 10 });
    });

    it('refuses what is not a PNG, JPEG, GIF or WebP', async () => {
      const text = path.join(dir, 'words.txt');
      await writeFile(text, 'not a picture');
      await expect(converter.convert('sticker', text, await workDir())).rejects.toMatchObject({ kind: 'invalid_input' });
      const svg = path.join(dir, 'drawing.svg');
      await writeFile(svg, '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
      await expect(converter.convert('sticker', svg, await workDir())).rejects.toMatchObject({ kind: 'invalid_input', message: 'a sticker must be a PNG, JPEG, GIF or WebP image' });
      const tiff = path.join(dir, 'scan.tiff');
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } }).tiff().toFile(tiff);
      await expect(converter.convert('sticker', tiff, await workDir())).rejects.toMatchObject({ message: 'a sticker must be a PNG, JPEG, GIF or WebP image, not image/tiff' });
    });

    it('refuses a sticker that stays over the network’s size at every quality tried', async () => {
      // Coloured noise does not compress: over 100 KiB at WebP quality 80 and 50.
      const noise = path.join(dir, 'noise.png');
      await sharp(randomBytes(512 * 512 * 3), { raw: { width: 512, height: 512, channels: 3 } }).png().toFile(noise);
      await expect(converter.convert('sticker', noise, await workDir())).rejects.toMatchObject({ kind: 'too_large', limit: '100 KiB' });
    });
  });

  describe('bounds', () => {
    it('answers unavailable past the deadline, when too many are under way, and without ffmpeg', async () => {
      const hurried = createMediaConverter({ ffmpegPath: 'ffmpeg', concurrency: 1, timeoutMs: 1 });
      await expect(hurried.convert('voice_note', inputs.get('wav')!, await workDir())).rejects.toMatchObject({ kind: 'unavailable', retryable: true });

      const busy = createMediaConverter({ ffmpegPath: 'ffmpeg', concurrency: 1, timeoutMs: 60_000 });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      // One running and 8 waiting per slot: the tenth is refused before it fetches anything.
      const admitted = Array.from({ length: 9 }, () => busy.admit(() => held));
      let fetched = false;
      await expect(busy.admit(async () => (fetched = true))).rejects.toMatchObject({ kind: 'unavailable' });
      expect(fetched).toBe(false);
      release();
      await Promise.all(admitted);
      await expect(busy.admit(async () => 'now')).resolves.toBe('now');

      const told: Error[] = [];
      const without = createMediaConverter({ ffmpegPath: path.join(dir, 'no-ffmpeg-here'), concurrency: 1, timeoutMs: 60_000, onUnavailable: (error) => told.push(error) });
      await expect(without.convert('voice_note', inputs.get('wav')!, await workDir())).rejects.toMatchObject({ kind: 'unavailable' });
      expect(told.map((error) => error.message)).toEqual([`ffmpeg was not found at ${path.join(dir, 'no-ffmpeg-here')}`]);
    });
  });

  describe('at ingest', () => {
    let storeDir: string;
    let http: HttpFetcher;
    const usage: UsageRecord[] = [];

    beforeAll(async () => {
      storeDir = await mkdtemp(path.join(tmpdir(), 'media-conversion-store-'));
      http = createHttpFetcher();
    });

    afterAll(async () => {
      await http?.close();
      if (storeDir) await rm(storeDir, { recursive: true, force: true });
    });

    const leftovers = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('gateway-convert-'));

    it('stores and counts the converted voice note and sticker, under names of their new types, and leaves no files behind', async () => {
      const store = createMediaStore({
        kind: 'filesystem',
        dir: storeDir,
        links: createMediaLinks({ secret: 'test-secret', publicBaseUrl: 'http://gateway.test', ttlSeconds: 3600 }),
        recordUsage: async (record) => void usage.push(record),
      });
      await store.ensure();
      const before = await leftovers();
      const mp3 = await readFile(inputs.get('mp3')!);
      const voice = await ingestMedia({ store, http, converter }, { base64: mp3.toString('base64'), filename: 'hello.mp3', mimetype: 'audio/mpeg' }, owner, 'voice_note');
      expect(voice.media).toMatchObject({ mime_type: 'audio/ogg; codecs=opus', filename: 'hello.ogg' });
      expect(voice.source).toMatchObject({ media_ref: voice.media.storage_key, mime_type: 'audio/ogg; codecs=opus', filename: 'hello.ogg' });
      expect(voice.playback.seconds).toBe(3);
      const stored = await store.get(voice.media.storage_key);
      const bytes = Buffer.concat(await stored!.body.toArray());
      expect(await fileTypeFromBuffer(bytes)).toEqual({ ext: 'opus', mime: 'audio/ogg; codecs=opus' });
      expect(voice.media.size).toBe(bytes.length);
      expect(usage.find((record) => record.media_id === voice.media.id)).toMatchObject({ kind: 'media_stored', quantity: bytes.length });

      const png = await sharp({ create: { width: 100, height: 300, channels: 4, background: '#0a0' } }).png().toBuffer();
      const sticker = await ingestMedia({ store, http, converter }, { base64: png.toString('base64'), filename: 'smile.png' }, owner, 'sticker');
      expect(sticker.media).toMatchObject({ mime_type: 'image/webp', filename: 'smile.webp' });
      expect(sticker.playback).toEqual({ kind: 'sticker', animated: false });

      await expect(ingestMedia({ store, http, converter }, { base64: Buffer.from('words, not sound').toString('base64') }, owner, 'voice_note')).rejects.toMatchObject({ kind: 'invalid_input' });
      expect(await leftovers()).toEqual(before);
    });

    it('answers conversions the caller must fix with invalid_request or media_too_large, and ours with service_unavailable', async () => {
      const store = createMediaStore({ kind: 'filesystem', dir: storeDir, links: createMediaLinks({ secret: 's', publicBaseUrl: 'http://gateway.test', ttlSeconds: 60 }), recordUsage: async () => undefined });
      const words = { base64: Buffer.from('words, not sound').toString('base64') };
      await expect(ingestSendMedia({ store, http, converter }, words, owner, 'voice_note')).rejects.toMatchObject({ code: 'invalid_request', statusCode: 400 });
      const short = createMediaConverter({ ffmpegPath: 'ffmpeg', concurrency: 1, timeoutMs: 60_000, voiceNoteMaxSeconds: 120 });
      const long = await synthesize(dir, 'long.mp3', 'sine=frequency=300:sample_rate=8000:duration=121', ['-c:a', 'libmp3lame', '-b:a', '8k']);
      const tooLong = { base64: (await readFile(long)).toString('base64') };
      await expect(ingestSendMedia({ store, http, converter: short }, tooLong, owner, 'voice_note')).rejects.toMatchObject({
        code: 'media_too_large',
        statusCode: 413,
        params: { limit: '2 min' },
      });
      const none = createMediaConverter({ ffmpegPath: path.join(dir, 'no-ffmpeg-here'), concurrency: 1, timeoutMs: 60_000 });
      await expect(ingestSendMedia({ store, http, converter: none }, words, owner, 'voice_note')).rejects.toMatchObject({ code: 'service_unavailable', statusCode: 503 });
    });
  });
});
