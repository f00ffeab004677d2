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

  /** A sandbox number of the test's account, its behaviour set, connected on a running connector. */
  async function connectedNumber(behaviour: { deliveredAfterMs: number; readAfterMs: number }, running: GatewayProcess): Promise<string> {
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
    await control(id, { kind: 'set_behaviour', delivered_after_ms: behaviour.deliveredAfterMs, read_after_ms: behaviour.readAfterMs, fail_to: null, block_from: null });
    await control(id, { kind: 'connect', method: 'qr', phone: `+551191111${String(9000 + states.length)}`, auto: true });
    await waitFor('the number connected', () => {
      running.assertRunning();
      return states.some((s) => s.instance_id === id && s.status === 'connected');
    }, { timeoutMs: 60_000 });
    return id;
  }

  it('delivers and reads every message accepted before the kill, once the connector is back', async () => {
    connector = startConnector();
    const first = connector;
    const id = await connectedNumber({ deliveredAfterMs: DELIVERED_AFTER_MS, readAfterMs: READ_AFTER_MS }, first);

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

  /**
   * The receipts of a killed connector's sends fall due on the next one, which has to read those
   * sends from Postgres, and the database fails then (the table of executed sends is away). The
   * number's session stays open, so nothing reloads the receipts: the same process tries them again
   * and writes them once the database answers.
   */
  it('writes the receipts whose write failed while their session stays open', async () => {
    connector?.kill('SIGKILL');
    await connector?.exited;
    connector = startConnector();
    const first = connector;
    const id = await connectedNumber({ deliveredAfterMs: 20_000, readAfterMs: 21_000 }, first);
    const commands = Array.from({ length: 10 }, (_, n) => sendCommand(id, 100 + n));
    await clients.producer.send(topics.sendCommands, commands.map((value) => ({ key: id, value })));
    await waitFor('every send accepted', () => commands.every((c) => statusesOf(c.message_id).includes('sent')), { intervalMs: 10 });
    first.kill('SIGKILL');
    await first.exited;

    connector = startConnector();
    const second = connector;
    // A send goes out once the number's session is open on the new connector, its owed receipts reloaded.
    await waitFor('the session open on the new connector', async () => {
      second.assertRunning();
      const probe = sendCommand(id, 200);
      await clients.producer.send(topics.sendCommands, [{ key: id, value: probe }]);
      await waitFor('the probe settled', () => statusesOf(probe.message_id).length > 0, { timeoutMs: 30_000, intervalMs: 20 });
      return statusesOf(probe.message_id).includes('sent');
    }, { timeoutMs: 60_000, intervalMs: 200 });
    const failedWrites = () => second.output().split('sandbox receipt not written').length - 1;
    await clients.pool.query('ALTER TABLE connector.executed RENAME TO executed_away');
    try {
      expect(commands.flatMap((c) => statusesOf(c.message_id)).filter((s) => s !== 'sent'), 'no receipt written before the fault').toEqual([]);
      await waitFor('receipt writes failing', () => {
        second.assertRunning();
        return failedWrites() >= 4;
      }, { timeoutMs: 60_000 });
    } finally {
      await clients.pool.query('ALTER TABLE connector.executed_away RENAME TO executed');
    }
    await waitFor('every message read, by the same process', () => {
      second.assertRunning();
      return commands.every((c) => statusesOf(c.message_id).includes('read'));
    }, { timeoutMs: 30_000 });
    for (const c of commands) expect(statusesOf(c.message_id), c.message_id).toEqual(expect.arrayContaining(['sent', 'delivered', 'read']));
  });
});
