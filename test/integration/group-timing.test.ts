import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { SandboxCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const SESSION_MS = 2_000;

describe('consumer group timing on the real broker', () => {
  let env: TestEnv;
  let clients: Clients;

  beforeAll(async () => {
    // A short session, as `KAFKA_SESSION_TIMEOUT_MS` sets it, keeps the test short.
    env = await createTestEnv({ KAFKA_SESSION_TIMEOUT_MS: String(SESSION_MS) });
    clients = await testClients(env);
  });

  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  it('keeps a member whose batch outlasts its session in the group', async () => {
    const sessionTimeout = SESSION_MS;
    const instance = newId('inst');
    const command: SandboxCommand = {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: asAccountId('acc_timing'),
      project_id: asProjectId('prj_timing'),
      instance_id: asInstanceId(instance),
      control: { kind: 'scan', phone: null },
    };
    await clients.producer.send(topics.sandboxCommands, [{ key: instance, value: command }]);
    const groupId = `${env.id}.timing`;
    const admin = clients.kafka.admin();
    await admin.connect();
    const members = async () => (await admin.describeGroups([groupId])).groups[0]?.members.map((m) => m.memberId) ?? [];
    const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId, topics: [topics.sandboxCommands], fromBeginning: true });
    let holding = false;
    let handled = 0;
    let release = () => {};
    try {
      await consumer.run(async (batch) => {
        if (batch.records.length === 0) return;
        if (handled === 0) {
          holding = true;
          // The batch holds past the session (a slow database, a large replay batch).
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, sessionTimeout + 2_000);
            release = () => (clearTimeout(timer), resolve());
          });
          holding = false;
        }
        handled++;
        batch.resolve(batch.records[batch.records.length - 1]!.offset);
        await consumer.commit(batch.topic, batch.partition, batch.records[batch.records.length - 1]!.offset + 1);
      });
      await waitFor('the batch being held', () => holding, { timeoutMs: 30_000 });
      const before = await members();
      expect(before).toHaveLength(1);
      await waitFor('the held batch handled', () => handled > 0, { timeoutMs: sessionTimeout + 30_000 });
      expect(await members(), 'the member was dropped from its group and joined again').toEqual(before);
      expect(handled, 'the batch was fetched again after the member lost its partitions').toBe(1);
    } finally {
      release();
      await consumer.stop();
      await admin.disconnect();
    }
  }, 90_000);

  it('drops a member that stops heartbeating once the configured session ends', async () => {
    const instance = newId('inst');
    const command: SandboxCommand = {
      event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: asAccountId('acc_timing'), project_id: asProjectId('prj_timing'),
      instance_id: asInstanceId(instance), control: { kind: 'scan', phone: null },
    };
    await clients.producer.send(topics.sandboxCommands, [{ key: instance, value: command }]);
    const groupId = `${env.id}.silent`;
    const admin = clients.kafka.admin();
    await admin.connect();
    const members = async () => (await admin.describeGroups([groupId])).groups[0]?.members.length ?? 0;
    // A consumer of the gateway's client whose batch never heartbeats: a stalled or killed process, as the broker sees it.
    const consumer = clients.kafka.consumer({ groupId });
    let holding = false;
    let release = () => {};
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topicName(topics.sandboxCommands, env.config.kafka.topicPrefix)], fromBeginning: true });
      await consumer.run({
        eachBatch: async () => {
          if (holding) return;
          holding = true;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 4 * SESSION_MS);
            release = () => (clearTimeout(timer), resolve());
          });
          holding = false;
        },
      });
      await waitFor('the batch being held', () => holding, { timeoutMs: 30_000 });
      expect(await members()).toBe(1);
      // The default session (10 s) would keep the member for the whole hold.
      await waitFor('the silent member out of its group', async () => holding && (await members()) === 0, { timeoutMs: 30_000, intervalMs: 100 });
    } finally {
      release();
      await consumer.disconnect();
      await admin.disconnect();
    }
  }, 60_000);
});
