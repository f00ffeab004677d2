import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { BATCH_OVERHEAD_BYTES, recordBytes } from '../../topics/record-size.js';

// kafkajs' own encoders: what a request really holds.
const require = createRequire(import.meta.url);
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => { buffer: Buffer };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (batch: object) => Promise<{ buffer: Buffer }> };

const messages = [
  { key: 'inst_1', value: Buffer.alloc(180, 1) },
  { key: null, value: null },
  { key: 'ключ', value: Buffer.alloc(70_000, 2), headers: { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } },
  { key: 'inst_2', value: Buffer.alloc(3), headers: { 'x-many': ['один', 'two', Buffer.from('three')], 'x-one': Buffer.alloc(40) } },
  // Many small headers: each one's own length prefixes count.
  { key: 'inst_3', value: Buffer.alloc(10), headers: Object.fromEntries(Array.from({ length: 30 }, (_, n) => [`h${n}`, 'v'])) },
  { key: 'inst_4', value: null, headers: { 'x-list': Array.from({ length: 5 }, (_, n) => 'w'.repeat(100 + n)) } },
];

describe('recordBytes', () => {
  it('never counts a record smaller than kafkajs encodes it, headers and their values included', () => {
    for (const message of messages) {
      const encoded = Record({ offsetDelta: 4_000, timestampDelta: 3_600_000, key: message.key === null ? null : Buffer.from(message.key), value: message.value, headers: message.headers });
      expect(recordBytes(message)).toBeGreaterThanOrEqual(encoded.buffer.length);
      // An upper bound, not a guess: within the widest varint prefixes of what it holds.
      expect(recordBytes(message) - encoded.buffer.length).toBeLessThan(40 + 10 * headerCount(message.headers));
    }
  });

  it('bounds a whole batch with the fixed part of a batch', async () => {
    const records = messages.map((message, n) => Record({ offsetDelta: n, timestampDelta: n, key: message.key === null ? null : Buffer.from(message.key), value: message.value, headers: message.headers }));
    const batch = await RecordBatch({ records, firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_003, lastOffsetDelta: records.length - 1 });
    const counted = BATCH_OVERHEAD_BYTES + messages.reduce((sum, message) => sum + recordBytes(message), 0);
    expect(counted).toBeGreaterThanOrEqual(batch.buffer.length);
  });
});

function headerCount(headers: Record<string, unknown> | undefined): number {
  return Object.values(headers ?? {}).reduce<number>((sum, value) => sum + (Array.isArray(value) ? value.length : 1), 0);
}
