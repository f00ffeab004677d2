import type { ConsumedBatch, ConsumedRecord, Decoded, Producer, TopicConsumer } from '../../topics/index.js';
import { SerdeError } from '../../schemas/serde.js';

/** A record as a consumer hands it over; `value` undefined makes it undecodable. */
export function memoryRecord<V>(topic: string, partition: number, offset: number, value: V | null | undefined, key: string | null = null): ConsumedRecord<V> {
  const decoded: Decoded<V> = value === undefined ? { ok: false, error: new SerdeError('not avro') } : { ok: true, value };
  return {
    topic,
    partition,
    offset,
    key,
    timestamp: Date.now(),
    headers: {},
    raw: value === undefined ? Buffer.from('not avro') : Buffer.from(JSON.stringify(value)),
    decoded,
  };
}

/** A fetched batch without a broker: what the consumer was told (resolved offsets, pauses) is kept to look at. */
export class MemoryBatch implements ConsumedBatch {
  readonly topic: string;
  readonly partition: number;
  readonly highWatermark: number;
  readonly firstOffset: number;
  /** Offsets passed to `resolve`, in order. */
  readonly resolved: number[] = [];
  pauses = 0;
  resumes = 0;
  running = true;

  /** `prefix` is the one the records' topic name was made with (`recordsOf` maps a spec to it). */
  constructor(
    readonly records: readonly ConsumedRecord<unknown>[],
    readonly prefix = '',
  ) {
    const first = records[0];
    if (first === undefined) throw new Error('a memory batch needs at least one record');
    this.topic = first.topic;
    this.partition = first.partition;
    this.highWatermark = records[records.length - 1]!.offset + 1;
    this.firstOffset = first.offset;
  }

  heartbeat(): Promise<void> {
    return Promise.resolve();
  }

  resolve(offset: number): void {
    this.resolved.push(offset);
  }

  isRunning(): boolean {
    return this.running;
  }

  pause(): () => void {
    this.pauses++;
    return () => void this.resumes++;
  }
}

/** A consumer fed by hand: `feed` runs the handler given to `run` on a batch, as a fetch would. */
export class MemoryConsumer implements TopicConsumer {
  readonly commits: { topic: string; partition: number; next: number }[] = [];
  /** Commit requests made (one may carry several partitions). */
  commitRequests = 0;
  readonly seeks: { topic: string; partition: number; offset: number }[] = [];
  private eachBatch: ((batch: ConsumedBatch) => Promise<void>) | undefined;

  run(eachBatch: (batch: ConsumedBatch) => Promise<void>): Promise<void> {
    this.eachBatch = eachBatch;
    return Promise.resolve();
  }

  feed(batch: ConsumedBatch): Promise<void> {
    if (this.eachBatch === undefined) throw new Error('the consumer is not running');
    return this.eachBatch(batch);
  }

  seek(topic: string, partition: number, offset: number): void {
    this.seeks.push({ topic, partition, offset });
  }

  commit(topic: string, partition: number, next: number): Promise<void> {
    this.commits.push({ topic, partition, next });
    this.commitRequests++;
    return Promise.resolve();
  }

  commitAll(positions: readonly { topic: string; partition: number; nextOffset: number }[]): Promise<void> {
    for (const { topic, partition, nextOffset } of positions) this.commits.push({ topic, partition, next: nextOffset });
    this.commitRequests++;
    return Promise.resolve();
  }

  /** The last position committed for a partition. */
  committed(topic: string, partition: number): number | undefined {
    return this.commits.filter((c) => c.topic === topic && c.partition === partition).at(-1)?.next;
  }

  stop(): Promise<void> {
    this.eachBatch = undefined;
    return Promise.resolve();
  }
}

export interface SentRaw {
  readonly topic: string;
  readonly key: string | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** A producer that keeps what it was given; `sendRaw` can be made to wait (a broker that does not answer). */
export class MemoryProducer implements Producer {
  readonly raw: SentRaw[] = [];
  readonly sent: { topic: string; records: readonly unknown[] }[] = [];
  /** While set, `sendRaw` waits on it before keeping the records. */
  gate: Promise<void> | undefined;

  send(spec: { readonly name: string }, records: readonly unknown[]): Promise<ReadonlyMap<number, number>> {
    this.sent.push({ topic: spec.name, records });
    return Promise.resolve(new Map());
  }

  async sendRaw(topic: string, records: readonly { key: string | null; value: Buffer | null; headers?: Record<string, string> }[]): Promise<void> {
    if (this.gate) await this.gate;
    for (const record of records) this.raw.push({ topic, key: record.key, value: record.value, headers: record.headers ?? {} });
  }

  disconnect(): Promise<void> {
    return Promise.resolve();
  }
}
