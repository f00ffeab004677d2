import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka } from 'kafkajs';
import { instancesProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { storedOffsets } from '../../processors/runtime/store.js';
import { InstanceStatusValues, type InstanceState } from '../../schemas/records.js';
import { asAccountId, asEventId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import type { Clients } from '../../stack/clients.js';
import { deadLetterTopic, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';

const instances = instancesProjection;
const TOTAL = 6_000;
const CHUNK = 100;

/** A deterministic stream of number states: many updates per number, some deletions and tombstones. */
function record(n: number): { key: string; value: InstanceState | null } {
  const id = `inst_${n % 150}`;
  if (n % 211 === 0) return { key: id, value: null };
  const status = InstanceStatusValues[n % InstanceStatusValues.length]!;
  return {
    key: id,
    value: {
      event_id: asEventId(`evt_${n}`),
      occurred_at: Date.UTC(2026, 0, 1) + n * 1_000,
      account_id: asAccountId(`acc_${n % 7}`),
      project_id: asProjectId(`prj_${n % 7}`),
      instance_id: asInstanceId(id),
      phone: `+55119${String(n % 150).padStart(8, '0')}`,
      nickname: `v${n}`,
      status,
      previous_status: n % 3 === 0 ? null : InstanceStatusValues[(n + 1) % InstanceStatusValues.length]!,
      reason: n % 5 === 0 ? 'network' : null,
      health_score: n % 101,
      pool_ids: n % 4 === 0 ? [`pool_${n % 3}`] : [],
      connector: n % 2 === 0 ? 'sandbox' : 'baileys',
      deleted: n % 97 === 0,
    },
  };
}

async function produceRange(clients: Clients, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += CHUNK) {
    const batch = [];
    for (let n = start; n < Math.min(to, start + CHUNK); n++) batch.push(record(n));
    await clients.producer.send(topics.instances, batch);
  }
}

async function applied(clients: Clients, schema: string): Promise<number> {
  const offsets = await storedOffsets(clients.pool, schema, topicName(topics.instances, clients.serdes.prefix)).catch(() => new Map<number, number>());
  return [...offsets.values()].reduce((a, b) => a + b, 0);
}

async function rows(clients: Clients, schema: string): Promise<unknown[]> {
  const { rows } = await clients.pool.query<Record<string, unknown>>(`SELECT * FROM "${schema}".numbers ORDER BY instance_id`);
  return rows;
}

describe('processor runtime on the real stack', () => {
  let env: TestEnv;
  let clients: Clients;
  let reference: RunningProjection | undefined;
  let live: GatewayProcess | undefined;
  const instancesTopic = () => topicName(topics.instances, clients.serdes.prefix);

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    live?.kill('SIGKILL');
    await reference?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('survives SIGKILL mid-stream: after restart the projection equals an uninterrupted run', async () => {
    await produceRange(clients, 0, TOTAL / 3);
    // A record no reader can decode: it must go to the dead-letter topic, not stop the projection.
    await clients.producer.sendRaw(instancesTopic(), [{ key: 'inst_1', value: Buffer.from('not avro') }]);

    const first = spawnGateway(['processor'], env.env);
    const producing = produceRange(clients, TOTAL / 3, TOTAL);
    const atKill = await waitFor('the processor to apply part of the stream', async () => {
      first.assertRunning();
      const n = await applied(clients, 'instances');
      return n >= 500 ? n : undefined;
    }, { timeoutMs: 60_000, intervalMs: 5 });
    first.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await producing;
    const end = TOTAL + 1;
    expect(atKill, 'the kill landed in the middle of the stream').toBeLessThan(end);

    live = spawnGateway(['processor'], env.env);
    await waitUntilCaughtUp(clients, 'instances', [instancesTopic()], Date.now() + 60_000);
    expect(await applied(clients, 'instances')).toBe(end);

    reference = await runProjection(clients, instances, { schema: 'instances_reference', groupId: `${env.id}.reference` });
    await waitUntilCaughtUp(clients, 'instances_reference', [instancesTopic()], Date.now() + 60_000);

    const liveRows = await rows(clients, 'instances');
    expect(liveRows.length).toBeGreaterThan(100);
    expect(liveRows).toEqual(await rows(clients, 'instances_reference'));
  });

  it('dead-letters the record it cannot decode, with the reason in headers', async () => {
    const kafka = new Kafka({ brokers: [...env.config.kafka.brokers], logLevel: 0 });
    const consumer = kafka.consumer({ groupId: `${env.id}.dead-reader` });
    await consumer.connect();
    await consumer.subscribe({ topic: topicName(deadLetterTopic, clients.serdes.prefix), fromBeginning: true });
    const seen: Array<Record<string, string>> = [];
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])));
      },
    });
    try {
      const header = await waitFor('a dead letter', () => seen.find((h) => h['x-dead-projection'] === 'instances'));
      expect(header['x-dead-topic']).toBe(instancesTopic());
      expect(header['x-dead-error']).toMatch(/wire format/);
    } finally {
      await consumer.disconnect();
    }
  });

  it('replay rebuilds the projection from offset zero and swaps it in while the live processor runs', async () => {
    const before = await rows(clients, 'instances');
    const replay = spawnGateway(['replay', 'instances'], env.env);
    // Keep writing during the replay: the swap must not lose or repeat these.
    await produceRange(clients, TOTAL, TOTAL + 1_000);
    expect(await replay.exited, replay.output()).toBe(0);
    expect(JSON.parse(replay.stdout().trim().split('\n').pop()!)).toMatchObject({ projection: 'instances' });

    await waitUntilCaughtUp(clients, 'instances', [instancesTopic()], Date.now() + 60_000);
    await waitUntilCaughtUp(clients, 'instances_reference', [instancesTopic()], Date.now() + 60_000);
    const after = await rows(clients, 'instances');
    expect(after).not.toEqual(before);
    expect(after).toEqual(await rows(clients, 'instances_reference'));
    const { rows: schemas } = await clients.pool.query<{ nspname: string }>(
      `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'instances\\_\\_%'`,
    );
    expect(schemas, 'replay and retired schemas are cleaned up').toEqual([]);
  });
});
