import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';

// kafkajs' own encoders, as patched at install (docs/development.md): the patch lets them take
// memory from Node's buffer pool, which is not zeroed.
const require = createRequire(import.meta.url);
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => unknown;
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (batch: object) => Promise<{ buffer: Buffer }> };
const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition') as (args: object) => Record<string, { key: string }[]>;
const Produce = require('kafkajs/src/protocol/requests/produce/v3/request') as (request: object) => { encode(): Promise<{ buffer: Buffer }> };
const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as (buffer: Buffer) => number;
const murmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: string | Buffer) => number;
const Long = require('kafkajs/src/utils/long') as { fromNumber(value: number): unknown };
const decodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: unknown) => Promise<{ records: Array<{ headers: Record<string, unknown> }> }>;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => unknown;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** Bytes that look random and are the same on every run. */
const noise = (length: number) => Buffer.from(Array.from({ length }, (_, i) => (Math.imul(i + 1, 2654435761) >>> 13) & 0xff));

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

/**
 * The patch writes records, batches and produce requests its own way (sized up front, copied
 * once), sums CRC32C eight bytes at a time and hashes keys with 32-bit arithmetic. What reaches the
 * broker must not change: the digests below are of the bytes unpatched kafkajs 2.2.4 wrote for the
 * same input, and the key hashes are its partitioner's (the Java client's: "21" is -973932308 in
 * Kafka's own tests), so a key keeps its partition across the change.
 */
describe('kafkajs encoding: the same bytes as unpatched kafkajs 2.2.4', () => {
  const varied = [
    { offsetDelta: 0, timestampDelta: 0, key: Buffer.from('inst_0'), value: Buffer.alloc(650, 7), headers: {} },
    { offsetDelta: 1, timestampDelta: -5, key: 'string key ü', value: 'string value ✓', headers: { traceparent: '00-abc-01', multi: ['a', 'b'] } },
    { offsetDelta: 2, timestampDelta: 5_000_000_000, key: null, value: null, headers: { 'x-empty': '' } },
    { offsetDelta: 300, timestampDelta: 1 << 30, key: Buffer.alloc(0), value: Buffer.alloc(20_000, 3), headers: { b: Buffer.from([1, 2, 3]) } },
    { offsetDelta: 70_000, timestampDelta: -(2 ** 40), key: 'k', value: Buffer.alloc(1), headers: undefined },
  ];

  it('records, small and large deltas, string and byte keys, null values, headers of every kind', () => {
    expect(varied.map((record) => sha256((Record(record) as { buffer: Buffer }).buffer))).toEqual([
      'bf41123931a8bf6a829be62453d18c19242d67fa2c977d089c06977f5f64bc3f',
      '12e39864dc48ca64c2538841c6a0bdf91a53f5e43906ddac1e69a9b8af8f7e25',
      '54d4828c4b888cac6db344c8012a4336962e529eba7f387c15de08120e2b08a6',
      '908ecaa3abc7d26ff1739004116bc42ddcc8de302f4dec8b27fcbaf3a4110563',
      'aa43dbc2b1f65673a3615c638b6dfffb0fa1f61b3d4ca4bc3ca24af72292adec',
    ]);
  });

  it('a record batch of an idempotent producer', async () => {
    const batch = await RecordBatch({
      records: varied.map(Record),
      firstTimestamp: 1_700_000_000_000,
      maxTimestamp: 1_700_000_000_028,
      lastOffsetDelta: 4,
      producerId: Long.fromNumber(123_456_789_012),
      producerEpoch: 3,
      firstSequence: 77,
    });
    expect(sha256(batch.buffer)).toBe('d932d41247407979fb424dcc553c09bd3708e23d55b97b098c69a5cd5cf97d76');
  });

  it('produce requests over two topics and three partitions, with and without record timestamps', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_700_000_000_500);
    const messages = (count: number, stamped: boolean) =>
      Array.from({ length: count }, (_, i) => ({
        key: `k${i}`,
        value: Buffer.alloc(100 + i, i),
        headers: i % 3 === 0 ? { h: `v${i}` } : {},
        ...(stamped ? { timestamp: String(1_700_000_000_000 + ((i * 37) % 11)) } : {}),
      }));
    const request = (stamped: boolean) =>
      Produce({
        acks: -1,
        timeout: 30_000,
        producerId: Long.fromNumber(42),
        producerEpoch: 1,
        topicData: [
          {
            topic: 'a',
            partitions: [
              { partition: 0, firstSequence: 5, messages: messages(40, stamped) },
              { partition: 3, firstSequence: 0, messages: messages(1, stamped) },
            ],
          },
          { topic: 'bb', partitions: [{ partition: 1, firstSequence: 9, messages: messages(7, stamped) }] },
        ],
      });
    expect(sha256((await request(false).encode()).buffer)).toBe('300613c4232872d144101a513ee13d43e1aa49dd0b715992b29f0f96939e4225');
    expect(sha256((await request(true).encode()).buffer)).toBe('818371406db534083ed1add326dce52dcd47c9aa48dd4dcbd785f67810396820');
  });

  it('CRC32C: the check value, and byte by byte over every length and alignment', () => {
    const T = Array.from({ length: 256 }, (_, n) => {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      return c >>> 0;
    });
    const bytewise = (bytes: Buffer) => {
      let c = 0xffffffff;
      for (const byte of bytes) c = T[(c ^ byte) & 0xff]! ^ (c >>> 8);
      return (c ^ 0xffffffff) >>> 0;
    };
    expect(crc32C(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32C(Buffer.alloc(0))).toBe(0);
    const data = noise(5_000);
    for (let from = 0; from < 9; from++) {
      for (const length of [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1_000, 4_000]) {
        const slice = data.subarray(from, from + length);
        expect(crc32C(slice)).toBe(bytewise(slice));
      }
    }
  });

  it('keys hash to the partitions they always had', () => {
    const keys: Array<[string | Buffer, number]> = [
      ['', 275646681],
      ['a', -1563381124],
      ['ab', 316155434],
      ['abc', 479470107],
      ['abcd', -1323649548],
      ['abcde', 461995741],
      ['21', -973932308],
      ['foobar', -790332482],
      ['wh_bench', -1877431186],
      ['inst_0123456789abcdef', -1861380028],
      ['prj_01HZXY', 1277338218],
      ['ü✓ unicode', -2100482850],
      ['x'.repeat(97), 391060292],
      [Buffer.from([1, 2, 3, 255, 128]), -161496840],
    ];
    expect(keys.map(([key]) => murmur2(key))).toEqual(keys.map(([, hash]) => hash));
  });
});

/**
 * The patch decodes a record's offset and timestamp in plain numbers while they are safe integers
 * (Long arithmetic beyond), a short varlong without Long, and its headers without an object per
 * header. The digest is of what unpatched kafkajs 2.2.4 decoded from the same batches.
 */
describe('kafkajs decoding: the same records as unpatched kafkajs 2.2.4', () => {
  const records = [
    { offsetDelta: 0, timestampDelta: 0, key: Buffer.from('inst_0'), value: Buffer.alloc(65, 7), headers: {} },
    { offsetDelta: 1, timestampDelta: -5, key: 'k', value: 'v', headers: { traceparent: '00-abc-01', multi: ['a', 'b', 'c'], single: 'x' } },
    { offsetDelta: 2, timestampDelta: 5_000_000_000, key: null, value: null, headers: { 'x-empty': '' } },
    { offsetDelta: 3, timestampDelta: (1 << 27) - 1, key: Buffer.alloc(0), value: Buffer.alloc(300, 3), headers: { __proto__x: 'p' } },
    { offsetDelta: 4, timestampDelta: 1 << 27, key: 'k2', value: Buffer.alloc(1), headers: undefined },
    { offsetDelta: 5, timestampDelta: -(2 ** 40), key: 'k3', value: Buffer.alloc(2), headers: {} },
  ];
  const decoded = async (firstOffset: number, firstTimestamp: number, logAppendTime: boolean) => {
    const batch = await RecordBatch({
      records: records.map(Record),
      firstOffset: Long.fromNumber(firstOffset),
      firstTimestamp,
      maxTimestamp: firstTimestamp + 99,
      lastOffsetDelta: 5,
    });
    const bytes = Buffer.from(batch.buffer);
    // The attributes follow the first offset, length, leader epoch, magic byte and CRC; bit 3 is LogAppendTime.
    if (logAppendTime) bytes.writeInt16BE(bytes.readInt16BE(21) | 8, 21);
    return decodeRecordBatch(new Decoder(bytes));
  };

  it('offsets and timestamps small, past 2^53 and unset, deltas of every size, LogAppendTime, repeated headers', async () => {
    const cases: Array<[number, number, boolean]> = [
      [0, 1_700_000_000_000, false],
      [9_007_199_254_740_000, 1_700_000_000_000, false],
      [123, -1, false],
      [5, 1_700_000_000_000, true],
    ];
    const lines: string[] = [];
    for (const [offset, timestamp, logAppendTime] of cases) {
      lines.push(
        JSON.stringify(await decoded(offset, timestamp, logAppendTime), (key, value: unknown) => {
          if (key === 'batchContext') return undefined;
          const bytes = value as { type?: string; data?: number[] } | null;
          return bytes?.type === 'Buffer' ? Buffer.from(bytes.data!).toString('hex') : value;
        }),
      );
    }
    expect(sha256(Buffer.from(lines.join('\n')))).toBe('703043e954410dfd931bff1d317aa1a35ff03e865c448ffe3a2299a4b23c856e');
  });

  it("a header named after an Object property is the header's own value", async () => {
    const batch = await RecordBatch({
      records: [Record({ key: 'k', value: 'v', headers: Object.fromEntries([['constructor', 'c'], ['__proto__', 'p']]) })],
      firstTimestamp: 1_700_000_000_000,
      maxTimestamp: 1_700_000_000_000,
    });
    const [record] = (await decodeRecordBatch(new Decoder(Buffer.from(batch.buffer)))).records;
    expect(Object.getOwnPropertyDescriptor(record!.headers, 'constructor')?.value).toEqual(Buffer.from('c'));
    expect(Object.getOwnPropertyDescriptor(record!.headers, '__proto__')?.value).toEqual(Buffer.from('p'));
    expect(Object.getPrototypeOf(record!.headers)).toBe(Object.prototype);
  });
});
