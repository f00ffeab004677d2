import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationsProjection } from '../../processors/conversations/index.js';
import type { Projection } from '../../processors/runtime/projection.js';
import { replaySwap } from '../../processors/runtime/replay.js';
import { ensureProjectionSchema, quoteIdent } from '../../processors/runtime/store.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { InboundMessage, MessageState, MessageStatus, SendCommand, SendStatus } from '../../schemas/records.js';
import { topics, type TopicSpec } from '../../topics/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { MemoryProducer } from '../support/memory-topics.js';

const ACCOUNT = asAccountId('acc_states');
const PROJECT = asProjectId('prj_states');
const NUMBER = asInstanceId('inst_states');
const ANA = '5511911113001@s.whatsapp.net';
const T0 = Date.UTC(2026, 0, 1, 12);
const at = (seconds: number) => T0 + seconds * 1_000;

function send(id: string, when: number, content: SendCommand['content']): SendCommand {
  return {
    event_id: asEventId(`cmd_${id}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: NUMBER, message_id: asMessageId(id),
    client_reference: null, to: ANA, origin: 'api', campaign_id: null, idempotency_key_hash: null, expires_at: null, quoted_message_id: null, mentions: [], content,
  };
}

function fact(command: SendCommand, status: SendStatus, when: number): MessageStatus {
  return {
    event_id: asEventId(`evt_${command.message_id}_${status}_${when}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: NUMBER,
    message_id: command.message_id, wa_message_id: `WA_${command.message_id}`, client_reference: null, campaign_id: null, to: ANA, status,
    error_code: status === 'failed' ? 'not_connected' : null, error_reason: null,
  };
}

function received(id: string, when: number, content: InboundMessage['content']): InboundMessage {
  return {
    event_id: asEventId(`evt_${id}`), occurred_at: when, account_id: ACCOUNT, project_id: PROJECT, instance_id: NUMBER, origin: 'customer',
    message_id: asMessageId(id), wa_message_id: `WA_${id}`, chat_jid: ANA, sender: { jid: ANA, lid: null, name: 'Ana', phone: null },
    from: ANA, to: null, quoted_id: null, quoted_participant: null, group: null, mentions: [], content,
  };
}

const read = send('msg_read', at(1), { kind: 'text', body: 'Your order ships tomorow' });
const failed = send('msg_failed', at(2), { kind: 'text', body: 'Tracking link' });
const edit = send('msg_edit', at(6), { kind: 'edit', quoted_message_id: `WA_${read.message_id}`, body: 'Your order ships tomorrow' });
const answer = received('msg_answer', at(4), { kind: 'text', body: 'Thanks' });
const answerEdit = received('msg_answer_edit', at(7), { kind: 'edit', quoted_message_id: `WA_${answer.message_id}`, body: 'Thanks!' });
/** The facts retention keeps longest in these cases: the first ones, and a late lower one. */
const earlyFacts = [fact(read, 'sent', at(2)), fact(failed, 'sent', at(3))];
const lateFacts = [fact(read, 'read', at(5)), fact(failed, 'failed', at(5)), fact(edit, 'sent', at(7))];
const staleFact = fact(read, 'delivered', at(9));

/**
 * The changelog's states applied in a replay merge with the records of the event topics as those
 * merge among themselves: whichever comes first, a state newer than the facts the log still holds
 * wins, and those facts applied after it move nothing back.
 */
describe('message states and the event topics, in any order', () => {
  let db: TestDatabase;
  const producer = new MemoryProducer();
  const live = conversationsProjection({ producer, mode: 'live' });
  const replay = conversationsProjection({ producer: new MemoryProducer(), mode: 'replay' });

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.dispose();
  });

  async function apply<V>(projection: Projection, schema: string, topic: TopicSpec<V>, values: readonly V[]): Promise<void> {
    await ensureProjectionSchema(db.pool, projection, schema);
    const handler = projection.handlers.find((h) => h.topic === topic)!;
    const tx = await db.pool.connect();
    try {
      await tx.query('BEGIN');
      await tx.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
      const meta = (offset: number) => ({ topic: topic.name, partition: 0, offset, key: null, timestamp: Date.now() });
      await handler.applyAll!(tx, values.map((value, offset) => ({ value, meta: meta(offset) })));
      await tx.query('COMMIT');
    } finally {
      tx.release();
    }
  }

  /** The replay's swap: the staged writes folded into the tables, the derived ones recomputed. */
  async function swap(projection: Projection, schema: string): Promise<void> {
    const lock = await db.pool.connect();
    try {
      await projection.deriveAfterReplay!(replaySwap(db.pool, lock, schema));
    } finally {
      lock.release();
    }
  }

  async function tables(schema: string): Promise<unknown[]> {
    const dump: unknown[] = [];
    for (const [table, order] of [['messages', 'message_id'], ['message_changes', 'change_id'], ['conversations', 'jid'], ['conversation_numbers', 'jid']]) {
      dump.push((await db.pool.query<Record<string, unknown>>(`SELECT * FROM ${quoteIdent(schema)}.${table} ORDER BY ${order}`)).rows);
    }
    return dump;
  }

  it('rebuilds the live rows with the states first or last', async () => {
    await apply(live, 'live', topics.messageStatus, earlyFacts);
    await apply(live, 'live', topics.sendCommands, [read, failed, edit]);
    await apply(live, 'live', topics.inboundMessages, [answer, answerEdit]);
    await apply(live, 'live', topics.messageStatus, lateFacts);
    await apply(live, 'live', topics.messageStatus, [staleFact]);
    const written = producer.sent.filter((s) => s.topic === topics.messageStates.name).flatMap((s) => s.records as { key: string; value: MessageState }[]);
    // One state per message changed in each batch: 2 + 3 + 2 + 3 + 1.
    expect(written).toHaveLength(11);
    const compacted = [...new Map(written.map((r) => [r.key, r.value])).values()];
    expect(compacted.find((s) => s.message_id === edit.message_id)).toMatchObject({ message: { status: 'sent', type: null }, change: { change_kind: 'edit' } });
    const expected = await tables('live');

    await apply(replay, 'states_first', topics.messageStates, compacted);
    await apply(replay, 'states_first', topics.messageStatus, [...earlyFacts, staleFact]);
    await swap(replay, 'states_first');
    expect(await tables('states_first')).toEqual(expected);

    await apply(replay, 'states_last', topics.messageStatus, [staleFact, ...earlyFacts]);
    await apply(replay, 'states_last', topics.messageStates, compacted);
    await swap(replay, 'states_last');
    expect(await tables('states_last')).toEqual(expected);
  });

  it('in a replay, writes the states only of records the live projection has not applied', async () => {
    const replayed = new MemoryProducer();
    // The live projection, which the replay will replace, has applied the first of these two sends.
    await ensureProjectionSchema(db.pool, live, 'conversations');
    await db.pool.query(`INSERT INTO conversations._offsets (topic, partition, next_offset) VALUES ($1, 0, 1)`, [topics.sendCommands.name]);
    const late = send('msg_during_swap', at(30), { kind: 'text', body: 'sent while the replay swapped in' });
    const rebuilding = conversationsProjection({ producer: replayed, mode: 'replay' });
    await apply(rebuilding, 'rebuilt', topics.sendCommands, [read, late]);
    await swap(rebuilding, 'rebuilt');
    const states = replayed.sent.flatMap((s) => s.records as { key: string }[]);
    expect(states.map((s) => s.key)).toEqual([late.message_id]);
  });
});
