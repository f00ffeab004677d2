import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { SerdeError, type RecordSerde } from '../../schemas/serde.js';
import { decodeBatch } from '../../topics/consumer.js';
import type { TopicSerdes } from '../../topics/index.js';

const TOPIC = 't.gw.events';

/** A serde of JSON values that counts its decodes, and fetches the schema of writer 2 once. */
function countingSerde() {
  const seen = { decodes: 0, fetches: 0 };
  let known = new Set([1]);
  const writerOf = (buffer: Buffer) => buffer.readUInt8(0);
  const serde: RecordSerde<unknown> = {
    subject: 'counting',
    schemaId: 1,
    encode: () => Buffer.alloc(0),
    decode: () => {
      throw new Error('not used by decodeBatch');
    },
    ready(buffer) {
      if (known.has(writerOf(buffer))) return undefined;
      seen.fetches++;
      return Promise.resolve().then(() => void (known = new Set([...known, writerOf(buffer)])));
    },
    decodeKnown(buffer) {
      if (!known.has(writerOf(buffer))) throw new SerdeError('writer not known');
      seen.decodes++;
      const text = buffer.subarray(1).toString('utf8');
      if (text === 'bad') throw new SerdeError('bad record');
      return JSON.parse(text) as unknown;
    },
  };
  return { serde, seen, serdes: { prefix: 't.', byTopicName: (name: string) => (name === TOPIC ? serde : undefined) } as unknown as TopicSerdes };
}

function payload(values: readonly (Buffer | null)[]): EachBatchPayload {
  const messages = values.map((value, n): KafkaMessage => ({ key: Buffer.from(`k${n}`), value, timestamp: '1000', attributes: 0, offset: String(10 + n), headers: {} }));
  return { batch: { topic: TOPIC, partition: 0, highWatermark: String(10 + values.length), messages } } as unknown as EachBatchPayload;
}

const record = (writer: number, text: string) => Buffer.concat([Buffer.from([writer]), Buffer.from(text)]);

describe('decodeBatch', () => {
  it('decodes a value the first time it is read, once, and never one that is not read', async () => {
    const { seen, serdes } = countingSerde();
    const batch = await decodeBatch(payload([record(1, '{"n":0}'), record(1, '{"n":1}'), record(1, '{"n":2}')]), serdes);
    expect(seen.decodes).toBe(0);
    expect(batch.records[0]!.decoded).toEqual({ ok: true, value: { n: 0 } });
    expect(batch.records[0]!.decoded).toBe(batch.records[0]!.decoded);
    expect(seen.decodes).toBe(1);
    expect(batch.records.map((r) => r.offset)).toEqual([10, 11, 12]);
    expect(seen.decodes).toBe(1);
  });

  it("fetches a writer's schema before the batch is handed out, so reading stays synchronous; undecodable records and tombstones say so", async () => {
    const { seen, serdes } = countingSerde();
    const batch = await decodeBatch(payload([record(2, '{"n":0}'), record(2, '{"n":1}'), record(1, 'bad'), null]), serdes);
    expect(seen.fetches).toBe(1);
    expect(batch.records[1]!.decoded).toEqual({ ok: true, value: { n: 1 } });
    const bad = batch.records[2]!.decoded;
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error.message).toBe('bad record');
    expect(batch.records[3]!.decoded).toEqual({ ok: true, value: null });
  });
});
