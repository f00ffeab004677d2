import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';

// kafkajs' own encoders, as patched at install (docs/development.md): the patch lets them take
// memory from Node's buffer pool, which is not zeroed.
const require = createRequire(import.meta.url);
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => unknown;
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (batch: object) => Promise<{ buffer: Buffer }> };
const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition') as (args: object) => Record<string, { key: string }[]>;

const records = () =>
  [0, 1, 2, 3, 4].map((n) =>
    Record({
      offsetDelta: n,
      timestampDelta: n * 7,
      key: Buffer.from(`inst_${n}`),
      value: Buffer.alloc(200 * n + 30, n + 1),
      headers: n % 2 === 0 ? { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, 'x-n': String(n) } : {},
    }),
  );

const batchBytes = async () =>
  (await RecordBatch({ records: records(), firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_028, lastOffsetDelta: 4 })).buffer;

describe('kafkajs encoding on unzeroed memory', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes every byte it hands out: a batch encoded in dirty memory equals one encoded in clean memory', async () => {
    const allocUnsafe = Buffer.allocUnsafe.bind(Buffer);
    const filled = (byte: number) => vi.spyOn(Buffer, 'allocUnsafe').mockImplementation((size: number) => allocUnsafe(size).fill(byte));

    filled(0x00);
    const clean = await batchBytes();
    vi.restoreAllMocks();
    const dirty = filled(0xa5);
    const encoded = await batchBytes();

    expect(dirty).toHaveBeenCalled();
    expect(encoded.equals(clean)).toBe(true);
  });

  it('groups messages by partition keeping their order', () => {
    const messages = Array.from({ length: 9 }, (_, n) => ({ key: `k${n}` }));
    const grouped = groupMessagesPerPartition({
      topic: 't',
      partitionMetadata: [{ partitionId: 0 }, { partitionId: 1 }, { partitionId: 2 }],
      messages,
      partitioner: ({ message }: { message: { key: string } }) => Number(message.key.slice(1)) % 3,
    });
    expect(Object.fromEntries(Object.entries(grouped).map(([p, list]) => [p, list.map((m) => m.key)]))).toEqual({
      0: ['k0', 'k3', 'k6'],
      1: ['k1', 'k4', 'k7'],
      2: ['k2', 'k5', 'k8'],
    });
  });
});
