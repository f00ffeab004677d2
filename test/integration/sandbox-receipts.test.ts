import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phoneJid } from '../../schemas/phones.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState, MessageStatus, SandboxCommand, SendCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { createConsumer, topics, type TopicConsumer } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';

const account = asAccountId('acc_receipts');
const project = asProjectId('prj_receipts');
const SENDS = 30;
/** Long enough that the sends are `sent` and the connector killed before any receipt is due. */
const DELIVERED_AFTER_MS = 4_000;
const READ_AFTER_MS = 5_000;

/** A connector process killed with receipts still owed: the next one delivers them. */
describe('sandbox receipts survive a SIGKILL of the connector', () => {
  let env: TestEnv;
  let clients: Clients;
  let reader: TopicConsumer;
  let connector: GatewayProcess | undefined;
  const states: InstanceState[] = [];
  const statuses: MessageStatus[] = [];

  const statusesOf = (messageId: string) => statuses.filter((s) => s.message_id === messageId).map((s) => s.status);

  async function control(id: string, value: SandboxCommand['control']): Promise<void> {
    const command: SandboxCommand = { event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: asInstanceId(id), control: value };
    await clients.producer.send(topics.sandboxCommands, [{ key: id, value: command }]);
  }

  function sendCommand(id: string, n: number): SendCommand {
    return {
      event_id: asEventId(newId('evt')),
      occurred_at: Date.now(),
      account_id: account,
      project_id: project,
      instance_id: asInstanceId(id),
      message_id: asMessageId(newId('msg')),
      client_reference: null,
      to: phoneJid(`+55119876${String(5000 + n)}`),
      origin: 'api',
      campaign_id: null,
      idempotency_key_hash: null,
      quoted_message_id: null,
      mentions: [],
      expires_at: null,
      content: { kind: 'text', body: `message ${n}` },
    };
  }

  function startConnector(): GatewayProcess {
    return spawnGateway(['connector'], env.env);
  }

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
    reader = await createConsumer(clients.kafka, clients.serdes, {
      groupId: `${env.id}.reader`,
      topics: [topics.instances, topics.messageStatus],
      fromBeginning: true,
    });
    await reader.run(async (batch) => {
      for (const record of batch.records) {
        if (!record.decoded.ok || !record.decoded.value) continue;
        if (record.topic.endsWith(topics.instances.name)) states.push(record.decoded.value as InstanceState);
        else statuses.push(record.decoded.value as MessageStatus);
      }
      batch.resolve(batch.records[batch.records.length - 1]!.offset);
    });
  });

  afterAll(async () => {
    connector?.kill('SIGKILL');
    await connector?.exited;
    await reader?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('delivers and reads every message accepted before the kill, once the connector is back', async () => {
    const id = newId('inst');
    await clients.producer.send(topics.instances, [{
      key: id,
      value: {
        event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: account, project_id: project, instance_id: asInstanceId(id),
        phone: null, nickname: 'receipts', status: 'pending', previous_status: null, reason: null, health_score: 100, pool_ids: [],
        connector: 'sandbox', deleted: false,
      },
    }]);
    // One partition of one topic: the behaviour is in place before the number connects, and before any send.
    await control(id, { kind: 'set_behaviour', delivered_after_ms: DELIVERED_AFTER_MS, read_after_ms: READ_AFTER_MS, fail_to: null, block_from: null });
    await control(id, { kind: 'connect', method: 'qr', phone: '+5511911119999', auto: true });
    connector = startConnector();
    const first = connector;
    await waitFor('the number connected', () => {
      first.assertRunning();
      return states.some((s) => s.instance_id === id && s.status === 'connected');
    }, { timeoutMs: 60_000 });

    const commands = Array.from({ length: SENDS }, (_, n) => sendCommand(id, n));
    const startedAt = Date.now();
    await clients.producer.send(topics.sendCommands, commands.map((value) => ({ key: id, value })));
    await waitFor('every send accepted', () => commands.every((c) => statusesOf(c.message_id).includes('sent')), { intervalMs: 10 });
    first.kill('SIGKILL');
    await first.exited;
    expect(Date.now() - startedAt, 'killed before the first receipt was due').toBeLessThan(DELIVERED_AFTER_MS);
    expect(statuses.filter((s) => s.instance_id === id && s.status !== 'sent')).toEqual([]);

    connector = startConnector();
    const second = connector;
    await waitFor('every message read', () => {
      second.assertRunning();
      return commands.every((c) => statusesOf(c.message_id).includes('read'));
    }, { timeoutMs: 90_000 });
    for (const c of commands) expect(statusesOf(c.message_id), c.message_id).toEqual(expect.arrayContaining(['sent', 'delivered', 'read']));
    // Settled receipts are owed no longer.
    await waitFor('no receipt owed', async () => {
      const { rows } = await clients.pool.query<{ n: string }>('SELECT count(*) AS n FROM sandbox.pending_receipts WHERE instance_id = $1', [id]);
      return rows[0]!.n === '0';
    });
  });
});
