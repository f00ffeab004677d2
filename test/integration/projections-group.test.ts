import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECTIONS_GROUP, runProjections, waitUntilCaughtUp, type Projection } from '../../processors/index.js';
import { on } from '../../processors/runtime/projection.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { partitionOf, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';

/** A projection that keeps where each record it applied sits in the log, doubles included. */
function probe(name: string): Projection {
  return {
    name,
    ddl: ['CREATE TABLE IF NOT EXISTS seen (part int NOT NULL, offs bigint NOT NULL)'],
    handlers: [on(topics.inboundMessages, async (tx, _value, meta) => void (await tx.query('INSERT INTO seen VALUES ($1, $2)', [meta.partition, meta.offset])))],
  };
}

function received(instance: string, n: number): InboundMessage {
  const chat = `55119${String(10_000_000 + n).padStart(8, '0')}@s.whatsapp.net`;
  return {
    event_id: asEventId(`evt_pg_${instance}_${n}`), occurred_at: Date.now(), account_id: asAccountId('acc_pg'), project_id: asProjectId('prj_pg'),
    instance_id: asInstanceId(instance), origin: 'customer', message_id: asMessageId(`msg_pg_${instance}_${n}`), wa_message_id: `WA_${instance}_${n}`,
    chat_jid: chat, sender: { jid: chat, lid: null, name: null, phone: null }, from: chat, to: null, quoted_id: null, quoted_participant: null,
    group: null, mentions: [], content: { kind: 'text', body: `hello ${n}` },
  };
}

/**
 * The processor's live projections share one consumer group and one fetch; each keeps its own
 * offsets in Postgres, so the group's position never decides what a projection has applied.
 */
describe('live projections in one group', () => {
  let env: TestEnv;
  let clients: Clients;
  let prefix: string;
  let inbound: string;

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    prefix = env.config.kafka.topicPrefix;
    inbound = topicName(topics.inboundMessages, prefix);
  });

  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  const send = (instances: readonly string[], from: number, count: number) =>
    clients.producer.send(
      topics.inboundMessages,
      Array.from({ length: count }, (_, n) => received(instances[n % instances.length]!, from + n)).map((value) => ({ key: value.instance_id, value })),
    );
  const seen = async (name: string) => {
    const { rows } = await clients.pool.query<{ part: number; offs: string }>(`SELECT part, offs FROM ${name}.seen`);
    return rows.map((r) => `${r.part}:${r.offs}`);
  };
  const caughtUp = (names: readonly string[]) => Promise.all(names.map((name) => waitUntilCaughtUp(clients, name, [inbound], Date.now() + 60_000)));

  it('applies every record once to each projection: one added later reads from the log start, one set back reads again', async () => {
    const instances = Array.from({ length: 6 }, (_, i) => `inst_pg_${i}`);
    await send(instances, 0, 30);
    let running = await runProjections(clients, [probe('probe_a')]);
    try {
      await caughtUp(['probe_a']);
    } finally {
      await running.stop();
    }

    await send(instances, 30, 20);
    running = await runProjections(clients, [probe('probe_a'), probe('probe_b')]);
    try {
      await caughtUp(['probe_a', 'probe_b']);
      for (const name of ['probe_a', 'probe_b']) {
        const offsets = await seen(name);
        expect(offsets, `${name}: every record`).toHaveLength(50);
        expect(new Set(offsets).size, `${name}: none twice`).toBe(50);
      }

      // As a replay's swap can: probe_b's tables and offsets go back to an older position of one partition.
      const partition = partitionOf(instances[0]!, 12);
      const { rows } = await clients.pool.query<{ next_offset: string }>('SELECT next_offset FROM probe_b._offsets WHERE topic = $1 AND partition = $2', [inbound, partition]);
      const back = Number(rows[0]!.next_offset) - 3;
      await clients.pool.query('DELETE FROM probe_b.seen WHERE part = $1 AND offs >= $2', [partition, back]);
      await clients.pool.query('UPDATE probe_b._offsets SET next_offset = $3 WHERE topic = $1 AND partition = $2', [inbound, partition, back]);
      await send([instances[0]!], 50, 2);
      await caughtUp(['probe_a', 'probe_b']);
      for (const name of ['probe_a', 'probe_b']) {
        const offsets = await seen(name);
        expect(offsets, `${name}: every record`).toHaveLength(52);
        expect(new Set(offsets).size, `${name}: none twice`).toBe(52);
      }

      const admin = clients.kafka.admin();
      await admin.connect();
      try {
        const { groups } = await admin.listGroups();
        expect(groups.map((g) => g.groupId).filter((id) => id.startsWith(`${prefix}processor.`))).toEqual([`${prefix}${PROJECTIONS_GROUP}`]);
      } finally {
        await admin.disconnect();
      }
    } finally {
      await running.stop();
    }
  });
});
