import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTableWriter, type ClickHouseTable } from '../../processors/index.js';
import { tableInput } from '../../processors/runtime/clickhouse-table.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { SendCommand } from '../../schemas/records.js';
import type { ClickHouse } from '../../shared/clickhouse.js';
import type { Clients } from '../../stack/clients.js';
import { endOffsets, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

const SENDS = 60;

function command(n: number): SendCommand {
  return {
    event_id: asEventId(`evt_tw_${n}`),
    occurred_at: Date.now(),
    account_id: asAccountId('acc_tw'),
    project_id: asProjectId('prj_tw'),
    // Sixty numbers: the commands land on most partitions of the topic.
    instance_id: asInstanceId(`inst_tw_${n}`),
    message_id: asMessageId(`msg_tw_${n}`),
    client_reference: null,
    to: `5511900000${String(n).padStart(3, '0')}@s.whatsapp.net`,
    origin: 'api',
    campaign_id: null,
    idempotency_key_hash: null,
    expires_at: null,
    quoted_message_id: null,
    mentions: [],
    content: { kind: 'text', body: `hello ${n}` },
  };
}

/**
 * A ClickHouse table writer on the real broker and an embedded chDB: the batches of every partition
 * one fetch brings go in one insert (ClickHouse makes a part of each insert), and a writer that
 * stops commits where it got to.
 */
describe('table writer: one insert per fetch', () => {
  let env: TestEnv;
  let clients: Clients;
  const inserts: string[] = [];
  const table: ClickHouseTable = {
    name: 'tw_sends',
    ddl: (name) => `CREATE TABLE IF NOT EXISTS \`${name}\` (message_id String) ENGINE = ReplacingMergeTree ORDER BY message_id`,
    inputs: [tableInput(topics.sendCommands, (sent) => [{ message_id: sent.message_id }])],
  };

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });
  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  it('writes the records of many partitions in one insert and commits them as it stops', async () => {
    await clients.producer.send(
      topics.sendCommands,
      Array.from({ length: SENDS }, (_, n) => ({ key: `inst_tw_${n}`, value: command(n) })),
    );
    const topic = topicName(topics.sendCommands, clients.serdes.prefix);
    const ends = await endOffsets(clients.kafka, topic);
    const partitionsWritten = [...ends.values()].filter((end) => end > 0).length;
    expect(partitionsWritten).toBeGreaterThan(3);

    const counting: ClickHouse = {
      ...clients.clickhouse,
      command: async (sql) => {
        if (sql.startsWith('INSERT INTO `tw_sends`')) inserts.push(sql);
        await clients.clickhouse.command(sql);
      },
    };
    const groupId = `${clients.serdes.prefix}tw`;
    const writer = await startTableWriter({ ...clients, clickhouse: counting }, table, { groupId });
    await waitFor('every send written', async () => {
      const [row] = await clients.clickhouse.query<{ n: string }>('SELECT count() AS n FROM tw_sends FINAL');
      return Number(row?.n) === SENDS;
    });
    expect(inserts).toHaveLength(1);
    await writer.stop();

    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const positions = new Map(committed!.partitions.map((p) => [p.partition, Number(p.offset)]));
      for (const [partition, end] of ends) if (end > 0) expect(positions.get(partition), `partition ${partition}`).toBe(end);
    } finally {
      await admin.disconnect();
    }
  });
});
