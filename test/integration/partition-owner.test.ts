import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { SandboxCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { createPartitionOwner, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('a partition owner on the real broker', () => {
  let env: TestEnv;
  let clients: Clients;

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  it('sets up a failed assignment again before it takes any batch, and then consumes', async () => {
    const instance = newId('inst');
    const command: SandboxCommand = {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: asAccountId('acc_owner'),
      project_id: asProjectId('prj_owner'),
      instance_id: asInstanceId(instance),
      control: { kind: 'scan', phone: null },
    };
    await clients.producer.send(topics.sandboxCommands, [{ key: instance, value: command }]);

    const assignments: { partitions: readonly number[]; failed: boolean }[] = [];
    const consumed: string[] = [];
    let early = 0;
    const owner = await createPartitionOwner(clients.kafka, clients.serdes, {
      groupId: `${env.id}.owner`,
      topics: [topics.sandboxCommands],
      logger: quiet,
      onAssignment: async (partitions) => {
        // The first set-up fails, as when the broker has no leader yet for a topic just created.
        const failed = partitions.length > 0 && !assignments.some((a) => a.partitions.length > 0);
        assignments.push({ partitions, failed });
        if (failed) throw new Error('not the leader for that topic-partition');
      },
    });
    try {
      await owner.run(async (batch) => {
        if (assignments[assignments.length - 1]?.failed) early++;
        for (const record of batch.records) if (record.decoded.ok) consumed.push((record.decoded.value as SandboxCommand).event_id);
        batch.resolve(batch.records[batch.records.length - 1]!.offset);
      });
      await waitFor('the command, consumed once', () => consumed.includes(command.event_id), { timeoutMs: 20_000 });
      expect(consumed).toEqual([command.event_id]);
      expect(early, 'batches taken before their partitions were set up').toBe(0);
      const taken = assignments.filter((a) => a.partitions.length > 0);
      // kafkajs may join again on its own (a fetch that met a moving leader), so count no joins.
      expect(taken[0]!.failed).toBe(true);
      expect(taken.slice(1).map((a) => a.failed)).not.toContain(true);
      expect(taken[1]!.partitions).toEqual(taken[0]!.partitions);
    } finally {
      await owner.stop();
    }
  });
});
