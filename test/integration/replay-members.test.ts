import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationsProjection } from '../../processors/conversations/index.js';
import { MEMBERS_FROM_RECORDS, replayMember, replayProjection, runProjection, waitUntilCaughtUp, type ReplayMembers } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage, MessageStatus, SendCommand } from '../../schemas/records.js';
import type { Clients } from '../../stack/clients.js';
import { recordsHeld, topicName, topics, type TopicSpec } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { spawnGateway } from '../support/gateway.js';

const ACCOUNT = asAccountId('acc_members');
const PROJECT = asProjectId('prj_members');
const T0 = Date.UTC(2026, 3, 1, 9);
const instance = (n: number) => asInstanceId(`inst_members_${n % 37}`);
const chat = (n: number) => `55119444${String(n % 501).padStart(5, '0')}@s.whatsapp.net`;

function send(n: number): SendCommand {
  return {
    event_id: asEventId(`cmd_members_${n}`), occurred_at: T0 + n, account_id: ACCOUNT, project_id: PROJECT, instance_id: instance(n),
    message_id: asMessageId(`msg_members_out_${n}`), client_reference: null, to: chat(n), origin: 'api', campaign_id: null,
    idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: [], content: { kind: 'text', body: `hello ${n}` },
  };
}

function fact(n: number): MessageStatus {
  return {
    event_id: asEventId(`evt_members_${n}`), occurred_at: T0 + n + 5, account_id: ACCOUNT, project_id: PROJECT, instance_id: instance(n),
    message_id: asMessageId(`msg_members_out_${n}`), wa_message_id: `WA_MEMBERS_${n}`, client_reference: null, to: chat(n),
    status: n % 3 === 0 ? 'read' : 'delivered', error_code: null, error_reason: null, campaign_id: null,
  };
}

function received(n: number): InboundMessage {
  return {
    event_id: asEventId(`evt_members_in_${n}`), occurred_at: T0 + n + 3, account_id: ACCOUNT, project_id: PROJECT, instance_id: instance(n),
    origin: 'customer', message_id: asMessageId(`msg_members_in_${n}`), wa_message_id: `WA_MEMBERS_IN_${n}`, chat_jid: chat(n),
    sender: { jid: chat(n), lid: null, name: `Customer ${n % 11}`, phone: null }, from: chat(n), to: null,
    quoted_id: null, quoted_participant: null, group: null, mentions: [], content: { kind: 'text', body: `reply ${n}` },
  };
}

/**
 * `gateway replay` of a large backlog with a worker thread besides the main one: each member
 * applies its share of every input's partitions (in a group of its own, so neither waits for a
 * rebalance), every record once, and the tables swapped in equal those a live run builds.
 */
describe('replay by members in worker threads', () => {
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

  const inputs = () => [topics.sendCommands, topics.messageStatus, topics.inboundMessages, topics.messageStates].map((t) => topicName(t, clients.serdes.prefix));

  async function dump(): Promise<Record<string, unknown[]>> {
    const out: Record<string, unknown[]> = {};
    for (const [table, order] of [['messages', 'message_id'], ['conversations', 'project_id, jid'], ['conversation_numbers', 'project_id, instance_id, jid']] as const) {
      out[table] = (await clients.pool.query(`SELECT * FROM conversations.${table} ORDER BY ${order}`)).rows;
    }
    return out;
  }

  it('splits the backlog by partition between the threads and swaps in what a live run builds', async () => {
    const sends = 12_000;
    const produce = async <V extends { instance_id: string }>(spec: TopicSpec<V>, values: readonly V[]) => {
      for (let i = 0; i < values.length; i += 2_000) await clients.producer.send(spec, values.slice(i, i + 2_000).map((value) => ({ key: value.instance_id, value })));
    };
    await produce(topics.sendCommands, Array.from({ length: sends }, (_, n) => send(n)));
    await produce(topics.messageStatus, Array.from({ length: sends / 2 }, (_, n) => fact(n * 2)));
    await produce(topics.inboundMessages, Array.from({ length: sends / 2 }, (_, n) => received(n)));
    const live = await runProjection(clients, conversationsProjection({ producer: clients.producer, mode: 'live' }));
    await waitUntilCaughtUp(clients, 'conversations', inputs().slice(0, 3), Date.now() + 120_000);
    await live.stop();
    const before = await dump();
    expect(before.messages).toHaveLength(sends * 1.5);

    const records = await recordsHeld(clients.kafka, inputs());
    expect(records).toBeGreaterThanOrEqual(MEMBERS_FROM_RECORDS);

    const replay = spawnGateway(['replay', 'conversations'], { ...env.env, REPLAY_THREADS: '1' });
    expect(await replay.exited, replay.output()).toBe(0);
    const result = JSON.parse(replay.stdout().trim().split('\n').pop()!) as { records: number; applied: { here: number; elsewhere: number } };
    expect(result.records).toBe(records);
    // Each thread applied a share, and no record was applied twice.
    expect(result.applied.here).toBeGreaterThan(records / 4);
    expect(result.applied.elsewhere).toBeGreaterThan(records / 4);
    expect(result.applied.here + result.applied.elsewhere).toBe(records);
    expect(await dump()).toEqual(before);
  }, 240_000);

  it('fails at once, dropping what it built, when another member dies before it is told to leave', async () => {
    const before = await dump();
    let died!: (error: Error) => void;
    // A member in this thread that applies a little of its share, then ends as a killed thread would.
    const dying: ReplayMembers = {
      count: 1,
      async join(group) {
        const member = await runProjection(clients, conversationsProjection({ producer: clients.producer, mode: 'replay' }), {
          schema: group.schema, ...replayMember(group, 1), lock: 'none', replaying: true,
        });
        setTimeout(() => void member.stop().then(() => died(new Error('a replay member\'s thread exited (code 1)'))), 200);
        return { lost: new Promise<never>((_, reject) => (died = reject)), leave: async () => member.applied() };
      },
    };
    const started = Date.now();
    await expect(
      replayProjection(clients, conversationsProjection({ producer: clients.producer, mode: 'replay' }), { members: dying, deadlineMs: 10 * 60_000 }),
    ).rejects.toThrow("a replay member's thread exited");
    expect(Date.now() - started, 'not after the deadline').toBeLessThan(30_000);
    const { rows: leftovers } = await clients.pool.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'conversations\\_\\_replay\\_%'`);
    expect(leftovers).toEqual([]);
    expect(await dump()).toEqual(before);
  }, 120_000);
});
