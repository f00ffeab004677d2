// A PNG, JPEG, GIF or WebP → a sticker as the network shows it: WebP, fit into 512x512 with
// transparent padding; animated GIF and WebP stay animated. With sharp (libvips, shipped inside its
// npm packages): Debian's ffmpeg 5.1 cannot decode animated WebP.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileTypeFromFile } from 'file-type';
import sharp, { type Metadata } from 'sharp';
import { MediaError } from '../errors.js';
import type { ConversionJob, Converted, Sticker } from './playback.js';

export const STICKER_SIDE = 512;
export const STICKER_MIME_TYPE = 'image/webp';
const FORMATS: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Pixels of all frames together: a 7000x7000 photo, or 190 frames of 512x512. */
const MAX_INPUT_PIXELS = 50_000_000;
/** The network's sticker sizes (its rules for sticker apps): larger ones may not show. */
const MAX_BYTES = { still: 100 * 1024, animated: 500 * 1024 } as const;
/** WebP qualities tried in turn until the sticker fits its size. */
const QUALITIES = { still: [80, 50], animated: [50, 25] } as const;
const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

/** The source's kind, from its own bytes: sharp never sees another format (SVG, TIFF, PDF, ...). */
async function inputOf(file: string): Promise<{ animated: boolean }> {
  const type = await fileTypeFromFile(file);
  if (type === undefined || !FORMATS.has(type.mime)) {
    throw MediaError.invalidInput(`a sticker must be a PNG, JPEG, GIF or WebP image${type ? `, not ${type.mime}` : ''}`);
  }
  let metadata: Metadata;
  try {
    metadata = await sharp(file, { animated: true, limitInputPixels: false }).metadata();
  } catch (error) {
    throw MediaError.invalidInput(`the sticker image could not be read (${(error as Error).message})`, error);
  }
  // With `animated`, the height is that of all frames stacked.
  if (metadata.width * metadata.height > MAX_INPUT_PIXELS) {
    throw MediaError.overCap('the sticker image has too many pixels', `${MAX_INPUT_PIXELS / 1_000_000} megapixels`);
  }
  return { animated: (metadata.pages ?? 1) > 1 };
}

/** One WebP encoding; sharp stops by itself at the job's deadline (the converter then answers that). */
async function encode(job: ConversionJob, animated: boolean, quality: number): Promise<Buffer> {
  const seconds = Math.max(1, Math.ceil((job.deadline - Date.now()) / 1000));
  try {
    return await sharp(job.input, { animated, limitInputPixels: MAX_INPUT_PIXELS })
      .resize(STICKER_SIDE, STICKER_SIDE, { fit: 'contain', background: TRANSPARENT })
      .webp({ quality })
      .timeout({ seconds })
      .toBuffer();
  } catch (error) {
    throw MediaError.invalidInput(`the sticker image could not be converted (${(error as Error).message})`, error);
  }
}

export async function toSticker(job: ConversionJob): Promise<Converted<Sticker>> {
  const { animated } = await inputOf(job.input);
  const kind = animated ? 'animated' : 'still';
  for (const quality of QUALITIES[kind]) {
    const webp = await encode(job, animated, quality);
    if (webp.length > MAX_BYTES[kind]) continue;
    const file = path.join(job.workDir, 'sticker.webp');
    await writeFile(file, webp, { flag: 'wx' });
    return { file, mimeType: STICKER_MIME_TYPE, extension: 'webp', playback: { kind: 'sticker', animated } };
  }
  throw MediaError.overCap(`the ${kind} sticker stays over the network's size at ${STICKER_SIDE}x${STICKER_SIDE}`, `${MAX_BYTES[kind] / 1024} KiB`);
}
