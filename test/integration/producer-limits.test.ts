import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, ensureTopics, topicName, watermarks, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const KiB = 1024;

/**
 * The producer against a broker that refuses record batches over a topic's `max.message.bytes`:
 * requests are cut by bytes to the limit read from the cluster, a record that fits nowhere fails
 * its own send only, and a limit lowered while the producer runs is found and followed.
 */
describe('producer: requests cut to the topics\' max.message.bytes', () => {
  let env: TestEnv;
  let clients: Clients;
  const readers: TopicConsumer[] = [];

  /** A one-partition topic of the test's own that accepts record batches up to `maxMessageBytes`. */
  async function smallTopic(name: string, maxMessageBytes: number): Promise<string> {
    const shape = { name, partitions: 1, cleanup: 'delete' as const, maxMessageBytes };
    await ensureTopics(clients.kafka, [shape], { prefix: env.config.kafka.topicPrefix, replicationFactor: 1 });
    return topicName(shape, env.config.kafka.topicPrefix);
  }

  /** The values of a topic's records, in log order, as text. */
  async function readAll(topic: string, count: number): Promise<string[]> {
    const values: string[] = [];
    const spec = { name: topic.slice(env.config.kafka.topicPrefix.length) } as TopicSpec<unknown>;
    const reader = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.read.${topic}`, topics: [spec], fromBeginning: true });
    readers.push(reader);
    await reader.run(async (batch) => {
      for (const record of batch.records) values.push(record.raw?.subarray(0, 40).toString('utf8') ?? '');
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    return waitFor(`${count} records of ${topic}`, () => values.length >= count && values, { timeoutMs: 60_000 });
  }

  const held = async (topic: string) => {
    const [partition] = [...(await watermarks(clients.kafka, topic)).values()];
    return partition!.high - partition!.low;
  };

  /** A record whose value starts with its label and is `bytes` long. */
  const record = (label: string, bytes: number) => ({ key: 'k', value: Buffer.concat([Buffer.from(`${label};`), Buffer.alloc(bytes - label.length - 1, 120)]) });

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    for (const reader of readers) await reader.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('writes many sends, and sends larger than the limit, over as many requests as the bytes need, in order', async () => {
    const topic = await smallTopic('small.many', 64 * KiB);
    const single = Array.from({ length: 200 }, (_, i) => clients.producer.sendRaw(topic, [record(`s${i}`, 10 * KiB)]));
    // One send of 50 records of 10 KiB: eight times the limit.
    const large = clients.producer.sendRaw(topic, Array.from({ length: 50 }, (_, i) => record(`l${i}`, 10 * KiB)));
    await Promise.all([...single, large]);
    const values = await readAll(topic, 250);
    expect(values.length).toBe(250);
    expect(await held(topic)).toBe(250);
    const labels = values.map((v) => v.split(';')[0]);
    expect(labels).toEqual([...Array.from({ length: 200 }, (_, i) => `s${i}`), ...Array.from({ length: 50 }, (_, i) => `l${i}`)]);
  });

  it('fails only the send holding a record that no request could carry, with the reason', async () => {
    const topic = await smallTopic('small.over', 64 * KiB);
    const before = clients.producer.sendRaw(topic, [record('a', 30 * KiB), record('b', 30 * KiB)]);
    const over = clients.producer.sendRaw(topic, [record('c', 1 * KiB), record('huge', 80 * KiB)]);
    const after = clients.producer.sendRaw(topic, [record('d', 30 * KiB)]);
    const refused: unknown = await over.then(() => undefined, (error: unknown) => error);
    expect(refused).toMatchObject({ name: 'GatewayFailure', kind: 'permanent' });
    expect(String(refused)).toContain('max.message.bytes');
    await Promise.all([before, after]);
    expect((await readAll(topic, 3)).map((v) => v.split(';')[0])).toEqual(['a', 'b', 'd']);
  });

  it('follows a limit lowered while it runs: the refused request is cut again, nothing is lost or written twice', async () => {
    const topic = await smallTopic('small.lowered', 256 * KiB);
    await clients.producer.sendRaw(topic, [record('warm', 1 * KiB)]);
    await smallTopic('small.lowered', 24 * KiB);
    const sends = Array.from({ length: 40 }, (_, i) => clients.producer.sendRaw(topic, [record(`r${i}`, 10 * KiB)]));
    await Promise.all(sends);
    expect((await readAll(topic, 41)).map((v) => v.split(';')[0])).toEqual(['warm', ...Array.from({ length: 40 }, (_, i) => `r${i}`)]);
    expect(await held(topic)).toBe(41);
  });
});
