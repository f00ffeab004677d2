import type { Message } from 'kafkajs';

/**
 * The fixed part of a record batch (format v2): base offset 8, length 4, leader epoch 4, magic 1,
 * CRC 4, attributes 2, last offset delta 4, first and max timestamps 16, producer id 8, epoch 2,
 * base sequence 4, record count 4. The broker holds a batch's whole size against the topic's
 * `max.message.bytes`.
 */
export const BATCH_OVERHEAD_BYTES = 61;

/** Varint length prefixes of a record (length, offset delta, key, value, header count) at their widest, plus a varlong timestamp delta and the attributes byte. */
const RECORD_OVERHEAD_BYTES = 5 + 1 + 10 + 5 + 5 + 5 + 5;
/** The two varint length prefixes of one header at their widest. */
const HEADER_OVERHEAD_BYTES = 10;

/**
 * An upper bound of the bytes a record takes in an uncompressed batch: what a request may hold is
 * counted with it, so a request cut to a topic's limit is never refused as too large.
 */
export function recordBytes(message: Pick<Message, 'key' | 'value' | 'headers'>): number {
  let bytes = RECORD_OVERHEAD_BYTES + byteLength(message.key) + byteLength(message.value);
  const headers = message.headers;
  // A loop over the names, not `Object.entries`: most records have no headers, and this runs for each.
  for (const name in headers) {
    const value = headers[name];
    const values = Array.isArray(value) ? value : [value];
    for (const one of values) bytes += HEADER_OVERHEAD_BYTES + Buffer.byteLength(name) + byteLength(one);
  }
  return bytes;
}

function byteLength(part: Buffer | string | null | undefined): number {
  if (part === null || part === undefined) return 0;
  return typeof part === 'string' ? Buffer.byteLength(part) : part.length;
}
