import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationsProjection } from '../../processors/conversations/index.js';
import { LogGapsError, replayProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { partitionOf, topicName, topics, watermarks } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

const ACCOUNT = asAccountId('acc_old');
const PROJECT = asProjectId('prj_old');

function received(instance: string, n: number): InboundMessage {
  const chat = `55119${String(10_000_000 + n).padStart(8, '0')}@s.whatsapp.net`;
  return {
    event_id: asEventId(`evt_old_${instance}_${n}`), occurred_at: Date.UTC(2026, 0, 1) + n, account_id: ACCOUNT, project_id: PROJECT,
    instance_id: asInstanceId(instance), origin: 'customer', message_id: asMessageId(`msg_old_${instance}_${n}`), wa_message_id: `WA_${instance}_${n}`,
    chat_jid: chat, sender: { jid: chat, lid: null, name: null, phone: null }, from: chat, to: null, quoted_id: null, quoted_participant: null,
    group: null, mentions: [], content: { kind: 'text', body: `hello ${n}` },
  };
}

/**
 * A replay of a projection whose inputs retention has cut (records deleted as retention deletes
 * them, with the broker's DeleteRecords): it says what it would lose and refuses, and with
 * `allowGaps` it finishes with what the log holds instead of waiting for records that are gone.
 */
describe('replay at any age', () => {
  let env: TestEnv;
  let clients: Clients;
  let live: RunningProjection | undefined;

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    await live?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('refuses to replay over deleted records, naming them, and with allowGaps rebuilds what the log holds', async () => {
    const inbound = topicName(topics.inboundMessages, env.config.kafka.topicPrefix);
    // Two numbers on two partitions: one loses every record to retention, the other its first ten.
    const [gone, cut] = ['inst_gone', ...Array.from({ length: 50 }, (_, i) => `inst_cut_${i}`)].reduce<string[]>((chosen, id) => {
      if (chosen.length === 0 || (chosen.length === 1 && partitionOf(id, 12) !== partitionOf(chosen[0]!, 12))) chosen.push(id);
      return chosen;
    }, []);
    const messages = [...Array.from({ length: 5 }, (_, n) => received(gone!, n)), ...Array.from({ length: 30 }, (_, n) => received(cut!, n))];
    await clients.producer.send(topics.inboundMessages, messages.map((value) => ({ key: value.instance_id, value })));
    // Its event topics alone, without the changelog that covers them (history-retention.test.ts).
    const projection = conversationsProjection({ producer: clients.producer, mode: 'live' });
    live = await runProjection(clients, projection);
    const inputs = projection.handlers.map((h) => topicName(h.topic, env.config.kafka.topicPrefix));
    await waitUntilCaughtUp(clients, 'conversations', inputs, Date.now() + 60_000);

    const held = await watermarks(clients.kafka, inbound);
    const gonePartition = partitionOf(gone!, 12);
    const cutPartition = partitionOf(cut!, 12);
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [inbound] });
      await admin.deleteTopicRecords({
        topic: inbound,
        partitions: [
          { partition: gonePartition, offset: String(held.get(gonePartition)!.high) },
          { partition: cutPartition, offset: String(held.get(cutPartition)!.low + 10) },
        ],
      });
    } finally {
      await admin.disconnect();
    }

    const refused = await replayProjection(clients, projection, { deadlineMs: 60_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(LogGapsError);
    expect((refused as LogGapsError).gaps).toEqual(
      expect.arrayContaining([
        { topic: inbound, partition: gonePartition, firstHeld: held.get(gonePartition)!.high },
        { topic: inbound, partition: cutPartition, firstHeld: held.get(cutPartition)!.low + 10 },
      ]),
    );
    expect((refused as Error).message).toContain(`${inbound} partition ${cutPartition} records 0-${held.get(cutPartition)!.low + 9}`);

    const started = Date.now();
    const result = await replayProjection(clients, projection, { deadlineMs: 60_000, allowGaps: true });
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(result.records).toBe(20);
    const { rows } = await clients.pool.query<{ wa_message_id: string }>('SELECT wa_message_id FROM conversations.messages ORDER BY wa_message_id');
    expect(rows.map((r) => r.wa_message_id).sort()).toEqual(messages.slice(15).map((m) => m.wa_message_id).sort());
  });
});
