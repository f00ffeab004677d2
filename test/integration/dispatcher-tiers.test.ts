import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDispatcher, type RunningDispatcher } from '../../connectors/webhooks/index.js';
import { newSigningSecret } from '../../events/signature.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { DeliveryAttempt, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import { createCipher } from '../../shared/cipher.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, deliveryRetryTier, topics, type TopicConsumer, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

/**
 * A schedule where one delay comes back after a longer one: retries that took their tier by
 * position would put a 300 ms retry behind 4 s ones, and it would come seconds late.
 */
const DELAYS_MS = [300, 4_000, 300];
const ATTEMPTS = DELAYS_MS.length + 1;
/** How late an attempt may come after its delay: polling, a rebalance, the producer's ack. */
const SLACK_MS = 1_500;
const EVENTS = 4;
const STAGGER_MS = 1_000;

describe('dispatcher retry tiers derived from the delays', () => {
  let env: TestEnv;
  let clients: Clients;
  let dispatcher: RunningDispatcher | undefined;
  let server: Server;
  const collectors: TopicConsumer[] = [];
  const attempts: DeliveryAttempt[] = [];
  const tiered = new Map<string, DeliveryTask[]>();
  /** Requests seen per event: the receiver fails every attempt but the last. */
  const seen = new Map<string, number>();
  const account = asAccountId('acc_tiers');
  const project = asProjectId('prj_tiers');
  const webhookId = 'wh_tiers';

  async function collect<V>(spec: TopicSpec<V>, into: V[]): Promise<void> {
    const consumer = await createConsumer(clients.kafka, clients.serdes, { groupId: `${env.id}.test.${spec.name}`, topics: [spec], fromBeginning: true });
    await consumer.run(async (batch) => {
      for (const record of batch.records) if (record.decoded.ok && record.decoded.value !== null) into.push(record.decoded.value as V);
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
    collectors.push(consumer);
  }

  function event(n: number): PublicEvent {
    return {
      event_id: asEventId(`evt_${env.id}_${n}`),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: null,
      event_type: 'message.sent',
      scope: 'project',
      client_reference: null,
      group: null,
      sender: null,
      mentions: [],
      payload_json: JSON.stringify({ n }),
      connection: null,
      trigger: 'scheduled',
      webhook_id: null,
    };
  }

  beforeAll(async () => {
    env = await createTestEnv({
      OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      WEBHOOK_RETRY_DELAYS: DELAYS_MS.map((ms) => `${ms}ms`).join(','),
    });
    clients = await testClients(env);
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const eventId = String(req.headers['x-service-event-id']);
        const count = (seen.get(eventId) ?? 0) + 1;
        seen.set(eventId, count);
        res.writeHead(count < ATTEMPTS ? 500 : 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${webhookId}`;
    await clients.producer.send(topics.config, [{
      key: webhookId,
      value: {
        event_id: asEventId(`cfg_${env.id}`),
        occurred_at: Date.now(),
        account_id: account,
        project_id: project,
        instance_id: null,
        entity_id: webhookId,
        entity: {
          kind: 'webhook', url, event_types: [], secret_ciphertext: createCipher(env.config.secretsKey).seal(newSigningSecret()),
          enabled: true, description: null, created_at: Date.now(),
        },
      },
    }]);
    await collect(topics.deliveryAttempts, attempts);
    for (const delayMs of new Set(DELAYS_MS)) {
      const tasks: DeliveryTask[] = [];
      tiered.set(deliveryRetryTier(delayMs).name, tasks);
      await collect(deliveryRetryTier(delayMs), tasks);
    }
    dispatcher = await startDispatcher(clients);
  });

  afterAll(async () => {
    await dispatcher?.stop();
    for (const consumer of collectors) await consumer.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await clients?.close();
    await env?.dispose();
  });

  it('makes each retry after its own delay and not much later, in order, with one delay a tier', async () => {
    const events: PublicEvent[] = [];
    for (let n = 1; n <= EVENTS; n++) {
      if (n > 1) await new Promise((resolve) => setTimeout(resolve, STAGGER_MS));
      const e = event(n);
      events.push(e);
      await clients.producer.send(topics.events, [{ key: project, value: e }]);
    }
    const attemptsOf = (eventId: string) => attempts.filter((a) => a.event_id === eventId).sort((a, b) => a.attempt - b.attempt);
    await waitFor('every event delivered at its last attempt', () => events.every((e) => attemptsOf(e.event_id).some((a) => a.outcome === 'delivered')), {
      timeoutMs: 60_000,
    });

    for (const e of events) {
      const made = attemptsOf(e.event_id);
      expect(made.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed_retryable'], [2, 'failed_retryable'], [3, 'failed_retryable'], [4, 'delivered']]);
      const gaps = made.slice(1).map((a, i) => a.occurred_at - made[i]!.occurred_at);
      gaps.forEach((gap, i) => {
        expect(gap, `${e.event_id}: retry ${i + 1} after ${gap} ms`).toBeGreaterThanOrEqual(DELAYS_MS[i]!);
        expect(gap, `${e.event_id}: retry ${i + 1} after ${gap} ms`).toBeLessThanOrEqual(DELAYS_MS[i]! + SLACK_MS);
      });
    }
    // Each tier holds tasks of its own delay only, so its order is the order they fall due.
    await waitFor('every retry task read back from its tier', () => [...tiered.values()].reduce((sum, tasks) => sum + tasks.length, 0) === EVENTS * DELAYS_MS.length);
    for (const [name, tasks] of tiered) {
      const delayMs = DELAYS_MS.find((ms) => deliveryRetryTier(ms).name === name)!;
      expect(tasks.length, name).toBeGreaterThan(0);
      expect(tasks.every((t) => t.not_before - t.occurred_at === delayMs), name).toBe(true);
    }
  });
});
