import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Intake } from '../../connectors/webhooks/intake.js';
import { Load } from '../../connectors/webhooks/load.js';
import { GatewayFailure, topicName, topics, type ConsumedRecord } from '../../topics/index.js';
import { MemoryBatch, MemoryConsumer, MemoryProducer, memoryRecord } from '../support/memory-topics.js';

const quiet = pino({ level: 'silent' });
const PREFIX = 't.';
const TOPIC = topicName(topics.events, PREFIX);

/** A delivery settled by hand. */
function delivery() {
  let settle!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  return { promise, settle, fail };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('dispatcher intake: resolving as deliveries start, committing only what settled', () => {
  const intakes: Intake[] = [];
  afterEach(async () => {
    for (const intake of intakes.splice(0)) await intake.close();
  });

  function setUp(limit = 100) {
    const consumer = new MemoryConsumer();
    const producer = new MemoryProducer();
    const load = new Load(limit);
    const intake = new Intake({ consumer, groupId: 't.dispatcher', producer, prefix: 't.', load, logger: quiet });
    intakes.push(intake);
    return { consumer, producer, load, intake };
  }

  /** Starts the intake with one delivery per record, its latest try kept by offset for the test to settle. */
  async function deliveringEach(intake: Intake, tries = new Map<number, number>()) {
    const deliveries = new Map<number, ReturnType<typeof delivery>>();
    await intake.consume([topics.events], (record: ConsumedRecord<unknown>) => {
      intake.admit(record, () => [
        () => {
          const one = delivery();
          deliveries.set(record.offset, one);
          tries.set(record.offset, (tries.get(record.offset) ?? 0) + 1);
          return one.promise;
        },
      ]);
      return true;
    });
    return deliveries;
  }

  const batchOf = (...offsets: number[]) => new MemoryBatch(offsets.map((offset) => memoryRecord(TOPIC, 0, offset, { offset })), PREFIX);

  it('resolves every record once its deliveries started, and commits past a record only once it and those before it settled', async () => {
    const { consumer, intake } = setUp();
    const deliveries = await deliveringEach(intake);
    const batch = batchOf(0, 1, 2);
    await consumer.feed(batch);
    expect(batch.resolved).toEqual([0, 1, 2]);
    expect([...deliveries.keys()]).toEqual([0, 1, 2]);

    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(0);

    deliveries.get(1)!.settle();
    await tick();
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(0);

    deliveries.get(0)!.settle();
    await tick();
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(2);

    deliveries.get(2)!.settle();
    await tick();
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(3);
    expect(consumer.commits.map((c) => c.next)).toEqual([0, 2, 3]);
  });

  it('commits the positions of every partition that moved in one request', async () => {
    const { consumer, intake } = setUp();
    const deliveries = await deliveringEach(intake);
    for (const partition of [0, 1, 2]) {
      await consumer.feed(new MemoryBatch([memoryRecord(TOPIC, partition, 10 + partition, { partition })], PREFIX));
      deliveries.get(10 + partition)!.settle();
    }
    await tick();
    await intake.flush();
    expect(consumer.commitRequests).toBe(1);
    expect([0, 1, 2].map((p) => consumer.committed(TOPIC, p))).toEqual([11, 12, 13]);
  });

  it('tries a delivery that failed again in the same process, and holds the commit at one that never settles', async () => {
    const { consumer, producer, intake } = setUp();
    const tries = new Map<number, number>();
    const deliveries = await deliveringEach(intake, tries);
    await consumer.feed(batchOf(0, 1, 2, 3));
    deliveries.get(0)!.settle();
    deliveries.get(1)!.fail(GatewayFailure.retryable('the broker did not answer'));
    deliveries.get(3)!.settle();
    await tick();
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(1);
    await vi.waitFor(() => expect(tries.get(1)).toBe(2), { timeout: 5_000 });
    deliveries.get(1)!.settle();
    await tick();
    await intake.flush();
    // Offset 2 never settles: the position waits there, whatever settles after it.
    expect(consumer.committed(TOPIC, 0)).toBe(2);
    expect(producer.raw).toEqual([]);
  });

  it('dead-letters a record whose delivery failed for good, and commits past it once the dead letter is written', async () => {
    const { consumer, producer, intake } = setUp();
    const tries = new Map<number, number>();
    const deliveries = await deliveringEach(intake, tries);
    await consumer.feed(batchOf(0, 1));
    deliveries.get(0)!.fail(GatewayFailure.nonRetryable('a record of 3000000 bytes does not fit t.gw.deliveries.retry.10s'));
    deliveries.get(1)!.settle();
    await vi.waitFor(async () => {
      await intake.flush();
      expect(consumer.committed(TOPIC, 0)).toBe(2);
    });
    expect(tries.get(0)).toBe(1);
    expect(producer.raw.map((r) => [r.headers['x-dead-offset'], r.headers['x-dead-error']])).toEqual([
      ['0', 'a record of 3000000 bytes does not fit t.gw.deliveries.retry.10s'],
    ]);
  });

  it('once stopping, leaves a failed delivery unsettled for the next run instead of trying it again', async () => {
    const { consumer, producer, intake } = setUp();
    const tries = new Map<number, number>();
    const deliveries = await deliveringEach(intake, tries);
    await consumer.feed(batchOf(0));
    intake.stopTaking();
    deliveries.get(0)!.fail(GatewayFailure.retryable('aborted: the dispatcher is stopping'));
    await tick();
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(0);
    expect(tries.get(0)).toBe(1);
    expect(producer.raw).toEqual([]);
  });

  it('does not start a record again when the partition is fetched again from an older position', async () => {
    const { consumer, intake } = setUp();
    const deliveries = await deliveringEach(intake);
    await consumer.feed(batchOf(0, 1));
    const first = deliveries.get(0)!;
    await consumer.feed(batchOf(0, 1, 2));
    expect(deliveries.get(0)).toBe(first);
    expect([...deliveries.keys()]).toEqual([0, 1, 2]);
  });

  it('dead-letters an undecodable record and a value the intake fails on for good, and commits past them once sent', async () => {
    const { consumer, producer, intake } = setUp();
    const sending = delivery();
    producer.gate = sending.promise;
    await intake.consume([topics.events], (record) => {
      if (record.offset === 1) throw GatewayFailure.nonRetryable('payload cannot be rendered');
      intake.admit(record, () => []);
      return true;
    });
    const batch = new MemoryBatch([
      memoryRecord(TOPIC, 0, 0, undefined, 'k0'),
      memoryRecord(TOPIC, 0, 1, { bad: true }, 'k1'),
      memoryRecord(TOPIC, 0, 2, { good: true }, 'k2'),
    ], PREFIX);
    await consumer.feed(batch);
    expect(batch.resolved).toEqual([0, 1, 2]);

    // The dead letters are not written yet: the position stays before them.
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(0);

    sending.settle();
    await tick();
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(3);
    expect(producer.raw.map((r) => [r.topic, r.key, r.headers['x-dead-offset'], r.headers['x-dead-consumer']])).toEqual([
      ['t.gw.processors.dead', 'k0', '0', 't.dispatcher'],
      ['t.gw.processors.dead', 'k1', '1', 't.dispatcher'],
    ]);
    expect(producer.raw[1]!.headers['x-dead-error']).toBe('payload cannot be rendered');
  });

  it('settles a tombstone at once', async () => {
    const { consumer, intake } = setUp();
    await intake.consume([topics.events], () => {
      throw new Error('a tombstone is not handed over');
    });
    await consumer.feed(new MemoryBatch([memoryRecord(TOPIC, 0, 0, null)], PREFIX));
    await intake.flush();
    expect(consumer.committed(TOPIC, 0)).toBe(1);
  });

  it('leaves a record the intake does not take, and the rest of its batch, unresolved', async () => {
    const { consumer, intake } = setUp();
    await intake.consume([topics.events], (record) => {
      if (record.offset >= 1) return false;
      intake.admit(record, () => []);
      return true;
    });
    const batch = batchOf(0, 1, 2);
    await consumer.feed(batch);
    expect(batch.resolved).toEqual([0]);
  });

  it('pauses a partition while too much is in flight, and resumes it once half has settled', async () => {
    const { consumer, intake } = setUp(2);
    const deliveries = await deliveringEach(intake);
    const batch = batchOf(0, 1);
    await consumer.feed(batch);
    expect(batch.pauses).toBe(1);
    deliveries.get(0)!.settle();
    await tick();
    expect(batch.resumes).toBe(1);
  });

  it('once stopping, pauses the partitions it is handed and takes nothing in', async () => {
    const { consumer, intake } = setUp();
    const deliveries = await deliveringEach(intake);
    intake.stopTaking();
    const batch = batchOf(0);
    await consumer.feed(batch);
    expect(batch.pauses).toBe(1);
    expect(batch.resolved).toEqual([]);
    expect(deliveries.size).toBe(0);
  });
});
