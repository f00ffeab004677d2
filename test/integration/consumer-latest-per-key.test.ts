import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { MessageStatus, SendStatus } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { backlogFetch, createConsumer, topicName, topics, watermarks } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const STATUSES: readonly SendStatus[] = ['sent', 'delivered', 'read'];

function status(message: number, status: SendStatus): MessageStatus {
  return {
    event_id: asEventId(`evt_latest_${message}_${status}`), occurred_at: Date.UTC(2026, 10, 1) + message, account_id: asAccountId('acc_latest'),
    project_id: asProjectId('prj_latest'), instance_id: asInstanceId('inst_latest'), message_id: asMessageId(`msg_latest_${message}`),
    wa_message_id: null, client_reference: null, to: '5511999990000@s.whatsapp.net', status, error_code: null, error_reason: null, campaign_id: null,
  };
}

interface Seen {
  readonly firstOffset: number;
  readonly offsets: number[];
  readonly values: MessageStatus[];
}

/**
 * A replay reads a compacted changelog for each key's latest value: with `latestPerKey`, a record
 * that a later one of its batch with the same key supersedes never reaches the handler (and is not
 * decoded), while the batch still says where it began, so positions stay contiguous.
 */
describe('a consumer reading the latest value per key', () => {
  let env: TestEnv;
  let clients: Clients;

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    // Three states of each of six messages, interleaved, all on the log before anyone reads.
    const records = STATUSES.flatMap((s) => Array.from({ length: 6 }, (_, m) => ({ key: `msg_latest_${m}`, value: status(m, s) })));
    await clients.producer.send(topics.messageStatus, records);
  });

  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  async function readAll(latest: boolean): Promise<Map<number, Seen[]>> {
    const name = topicName(topics.messageStatus, clients.serdes.prefix);
    const ends = await watermarks(clients.kafka, name);
    const consumer = await createConsumer(clients.kafka, clients.serdes, {
      groupId: `${env.id}.latest.${latest}`,
      topics: [topics.messageStatus],
      fromBeginning: true,
      fetch: backlogFetch,
      latestPerKey: latest ? [topics.messageStatus] : [],
    });
    const seen = new Map<number, Seen[]>();
    const next = new Map<number, number>();
    await consumer.run(async (batch) => {
      const values = batch.records.flatMap((r) => (r.decoded.ok && r.decoded.value !== null ? [r.decoded.value as MessageStatus] : []));
      seen.set(batch.partition, [...(seen.get(batch.partition) ?? []), { firstOffset: batch.firstOffset, offsets: batch.records.map((r) => r.offset), values }]);
      next.set(batch.partition, batch.records.at(-1)!.offset + 1);
      batch.resolve(batch.records.at(-1)!.offset);
    });
    try {
      await waitFor('every partition read', () => [...ends].every(([p, { high }]) => (next.get(p) ?? 0) >= high) || undefined, { timeoutMs: 30_000 });
    } finally {
      await consumer.stop();
    }
    return seen;
  }

  it('hands over only the last record of each key in a batch, and where the batch began', async () => {
    const all = await readAll(false);
    const latest = await readAll(true);
    expect([...all.values()].flat().flatMap((b) => b.values)).toHaveLength(18);

    const kept = [...latest.values()].flat().flatMap((b) => b.values);
    // The records were all there before the first fetch: each partition came in one batch, so each message once, at its last status.
    expect(kept.map((v) => v.message_id).sort()).toEqual(Array.from({ length: 6 }, (_, m) => `msg_latest_${m}`).sort());
    expect(kept.every((v) => v.status === 'read')).toBe(true);
    for (const [partition, batches] of latest) {
      const whole = all.get(partition)!.flatMap((b) => b.offsets);
      expect(batches.map((b) => b.firstOffset), `partition ${partition}`).toEqual([whole[0]]);
      expect(batches[0]!.offsets.at(-1)).toBe(whole.at(-1));
    }
  });
});
