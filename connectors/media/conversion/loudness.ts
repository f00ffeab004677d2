// A voice note's duration and its waveform: the 64 bars the network's apps draw under the play
// button. The apps compute them from the decoded samples of one channel: the samples cut into 64
// equal blocks (the remainder dropped), each block's mean absolute value, scaled so the loudest
// block is 100, each bar rounded down (WhatsApp Web's own steps, also written in Baileys'
// `getAudioWaveform`). Samples arrive from ffmpeg as a stream of little-endian 32-bit floats,
// so the meter keeps sums over bins of 2.5 ms rather than every sample (3 MB for 30 minutes), and a
// bar differs from the one over every sample by a few hundredths at most.

/** Samples per second of the mono PCM ffmpeg hands over for measuring. */
export const MEASURE_RATE = 8000;
export const WAVEFORM_BARS = 64;
const BIN_SAMPLES = MEASURE_RATE / 400;
const SAMPLE_BYTES = 4;

export class LoudnessMeter {
  /** Sum of |sample| per bin of BIN_SAMPLES samples; the last bin may be partly filled. */
  private sums = new Float32Array(4096);
  private samples = 0;
  /** Bytes of a sample split between two chunks. */
  private carry = Buffer.alloc(0);

  push(chunk: Buffer): void {
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const whole = bytes.length - (bytes.length % SAMPLE_BYTES);
    for (let offset = 0; offset < whole; offset += SAMPLE_BYTES) {
      const bin = Math.floor(this.samples / BIN_SAMPLES);
      if (bin >= this.sums.length) this.grow();
      this.sums[bin]! += Math.abs(bytes.readFloatLE(offset));
      this.samples += 1;
    }
    this.carry = Buffer.from(bytes.subarray(whole));
  }

  /** Samples measured so far. */
  get sampleCount(): number {
    return this.samples;
  }

  get seconds(): number {
    return this.samples / MEASURE_RATE;
  }

  /**
   * The 64 bars, 0 to 100. A block's sum takes the bins it covers, and of a bin it covers in part
   * the same part of its sum. Silence draws 64 zeros.
   */
  waveform(): Uint8Array {
    const bars = new Uint8Array(WAVEFORM_BARS);
    const blockSize = Math.floor(this.samples / WAVEFORM_BARS);
    if (blockSize === 0) return bars;
    const bins = Math.ceil(this.samples / BIN_SAMPLES);
    // before[k]: the sum of the bins ahead of bin k.
    const before = new Float64Array(bins + 1);
    for (let bin = 0; bin < bins; bin++) before[bin + 1] = before[bin]! + this.sums[bin]!;
    const sumUpTo = (position: number) => {
      const bin = Math.floor(position / BIN_SAMPLES);
      const into = position - bin * BIN_SAMPLES;
      if (into === 0) return before[bin]!;
      const binLength = Math.min(BIN_SAMPLES, this.samples - bin * BIN_SAMPLES);
      return before[bin]! + (this.sums[bin]! * into) / binLength;
    };
    const means = Array.from({ length: WAVEFORM_BARS }, (_, i) => (sumUpTo((i + 1) * blockSize) - sumUpTo(i * blockSize)) / blockSize);
    const loudest = Math.max(...means);
    if (loudest === 0) return bars;
    means.forEach((mean, i) => (bars[i] = Math.floor((100 * mean) / loudest)));
    return bars;
  }

  private grow(): void {
    const larger = new Float32Array(this.sums.length * 2);
    larger.set(this.sums);
    this.sums = larger;
  }
}
