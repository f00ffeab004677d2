import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { SandboxCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

/** kafkajs' queue of one broker connection's requests (patched: patches/kafkajs+2.2.4.patch). */
interface RequestQueue {
  readonly pending: readonly unknown[];
  readonly throttleCheckTimeoutId: NodeJS.Timeout | null;
  scheduleCheckPendingRequests: (this: RequestQueue) => void;
}

const { prototype: queue } = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueue };

/**
 * An idle connection arms no timer: kafkajs 2.2.4 re-armed a check of its pending requests every
 * millisecond for as long as a connection lived, pending or not (a few percent of a core per
 * connection, and Node 24's TimeoutNegativeWarning at start).
 */
describe('the Kafka client at rest', () => {
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

  it('leaves no check of pending requests scheduled once nothing is pending', async () => {
    const queues = new Set<RequestQueue>();
    const schedule = queue.scheduleCheckPendingRequests;
    queue.scheduleCheckPendingRequests = function (this: RequestQueue) {
      queues.add(this);
      schedule.call(this);
    };
    try {
      const instance = newId('inst');
      const command: SandboxCommand = {
        event_id: asEventId(newId('evt')),
        occurred_at: Date.now(),
        account_id: asAccountId('acc_idle'),
        project_id: asProjectId('prj_idle'),
        instance_id: asInstanceId(instance),
        control: { kind: 'scan', phone: null },
      };
      await clients.producer.send(topics.sandboxCommands, [{ key: instance, value: command }]);
    } finally {
      queue.scheduleCheckPendingRequests = schedule;
    }
    const idle = [...queues].filter((q) => q.pending.length === 0);
    expect(idle.length).toBeGreaterThan(0);
    expect(idle.filter((q) => q.throttleCheckTimeoutId !== null)).toHaveLength(0);
  });
});
