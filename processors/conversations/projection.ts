import type { PoolClient } from 'pg';
import { topics, type Producer } from '../../topics/index.js';
import { onBatch, sendsTakenInTime, valuesOf, type Applied, type Projection } from '../runtime/projection.js';
import { inboundRow, sendRow } from './rows.js';
import { applyStatuses, deriveConversations, recordMessages } from './store.js';
import { changeRow, changesDdl, isChange, recordChanges } from './changes.js';
import { changelogDdl, publishMessageStates } from './changelog.js';
import { stagedDdl, stagedMessages } from './staged.js';
import { intoEmptyTables, swapParts } from '../runtime/staging.js';

export interface ConversationsProjectionOptions {
  /** Where the states of the messages go (`gw.messages.state`). */
  readonly producer: Producer;
  /**
   * `live` writes the state of every message it changes to the changelog. `replay` reads the
   * changelog back, and writes the states only of records the live projection has not applied:
   * a record that arrives while the replay swaps in (which the live runner then skips) is not lost.
   */
  readonly mode: 'live' | 'replay';
}

/** The tables of the projection; the seeding mark goes before them (`changelogDdl`). */
const tables: Pick<Projection, 'name' | 'ddl'> = {
  name: 'conversations',
  ddl: [
    `CREATE TABLE IF NOT EXISTS messages (
      message_id text PRIMARY KEY,
      account_id text NOT NULL,
      project_id text NOT NULL,
      instance_id text NOT NULL,
      jid text NOT NULL,
      direction text NOT NULL,
      origin text,
      type text,
      body text,
      media_id text,
      media_mime_type text,
      media_filename text,
      media_size bigint,
      latitude double precision,
      longitude double precision,
      poll_name text,
      poll_options text[],
      vote_poll_message_id text,
      vote_selected text[],
      code_masked text,
      occurred_at timestamptz NOT NULL,
      wa_message_id text,
      quoted_id text,
      quoted_participant text,
      sender_jid text,
      sender_lid text,
      sender_name text,
      from_jid text,
      to_jid text,
      group_jid text,
      group_name text,
      chat_name text,
      mentions text[] NOT NULL DEFAULT '{}',
      status text,
      queued_at timestamptz,
      sent_at timestamptz,
      delivered_at timestamptz,
      read_at timestamptz,
      failed_at timestamptz,
      error_code text,
      client_reference text
    )`,
    // Added after the table: a failure's reason, kept so the history's changelog carries it.
    `ALTER TABLE messages ADD COLUMN IF NOT EXISTS error_reason text`,
    // Added after the table: a campaign send's campaign, so the changelog carries it past the commands' retention.
    `ALTER TABLE messages ADD COLUMN IF NOT EXISTS campaign_id text`,
    // type (and origin) stay null on a row that only status facts have created so far.
    `CREATE INDEX IF NOT EXISTS messages_history ON messages (project_id, jid, occurred_at DESC, message_id DESC)`,
    `CREATE TABLE IF NOT EXISTS conversations (
      project_id text NOT NULL,
      jid text NOT NULL,
      account_id text NOT NULL,
      name text,
      last_instance_id text NOT NULL,
      last_message_id text NOT NULL,
      last_message_at timestamptz NOT NULL,
      last_message_type text NOT NULL,
      last_message_direction text NOT NULL,
      last_message_preview text,
      unread_count integer NOT NULL,
      PRIMARY KEY (project_id, jid)
    )`,
    `CREATE INDEX IF NOT EXISTS conversations_newest ON conversations (project_id, last_message_at DESC, jid DESC)`,
    // The numbers that took part in each conversation (the instance_id filter of the inbox).
    `CREATE TABLE IF NOT EXISTS conversation_numbers (
      project_id text NOT NULL,
      instance_id text NOT NULL,
      jid text NOT NULL,
      PRIMARY KEY (project_id, instance_id, jid)
    )`,
    `CREATE INDEX IF NOT EXISTS conversation_numbers_by_jid ON conversation_numbers (project_id, jid)`,
    ...changesDdl,
  ],
};

/**
 * The unified inbox: one conversation per (project, customer phone jid or group jid) across all
 * of the project's numbers, with its messages. Built from our sends, their status facts and the
 * received messages (with the owner's own sends from the phone).
 */
export function conversationsProjection(options: ConversationsProjectionOptions): Projection {
  const { producer } = options;
  if (options.mode === 'replay') return replayed(producer);
  return {
    ...tables,
    ddl: [...changelogDdl, ...tables.ddl],
    deriveAfterReplay: (swap) => swap.step((tx) => deriveConversations(tx)),
    // Every message changed goes to the changelog.
    handlers: [
      onBatch(topics.sendCommands, async (tx, commands, scope) => {
        const sends = valuesOf(sendsTakenInTime(commands));
        const messages = await recordMessages(tx, sends.filter((s) => !isChange(s)).map(sendRow), scope);
        await publishMessageStates(tx, producer, messages, await recordChanges(tx, sends.flatMap((s) => changeRow(s) ?? [])));
      }),
      onBatch(topics.messageStatus, async (tx, facts) => {
        await publishMessageStates(tx, producer, await applyStatuses(tx, valuesOf(facts)), []);
      }),
      onBatch(topics.inboundMessages, async (tx, received, scope) => {
        const messages = valuesOf(received);
        const rows = await recordMessages(tx, messages.filter((m) => !isChange(m)).map(inboundRow), scope);
        await publishMessageStates(tx, producer, rows, await recordChanges(tx, messages.flatMap((m) => changeRow(m) ?? [])));
      }),
    ],
    changelogCovers: [],
  };
}

/**
 * The replay: it reads the changelog back too, so the history older than the retention of the
 * event topics is rebuilt. Every write of a message is staged (`staged.ts`) and merged at the
 * swap; then the states of the messages of records the live projection has not applied go to the
 * changelog, as they are once everything is merged: a record that arrives while the replay swaps
 * in (which the live runner then skips) is not lost.
 */
function replayed(producer: Producer): Projection {
  const staged = stagedMessages();
  const news = newsReader();
  return {
    ...tables,
    ddl: [...changelogDdl, ...tables.ddl, ...stagedDdl],
    // The replay's tables are empty until the swap fills them: their keys and indexes are built once, after.
    deriveAfterReplay: (swap) =>
      intoEmptyTables(swap, ['messages', 'conversation_numbers', 'conversations'], async () => {
        await staged.mergeAtSwap(swap, producer);
        await swap.together(swapParts().map((part) => (tx) => deriveConversations(tx, 'empty', part)));
      }),
    handlers: [
      onBatch(topics.messageStates, (tx, states) => staged.stageStates(tx, states), { latestPerKey: true }),
      onBatch(topics.sendCommands, async (tx, commands) => {
        const taken = sendsTakenInTime(commands);
        await staged.stageMessages(tx, taken, sendRow);
        await recordChanges(tx, valuesOf(taken).flatMap((s) => changeRow(s) ?? []));
        await staged.stageNews(tx, await news(tx, commands));
      }),
      onBatch(topics.messageStatus, async (tx, facts) => {
        await staged.stageStatuses(tx, facts);
        await staged.stageNews(tx, await news(tx, facts));
      }),
      onBatch(topics.inboundMessages, async (tx, received) => {
        await staged.stageMessages(tx, received, inboundRow);
        await recordChanges(tx, valuesOf(received).flatMap((m) => changeRow(m) ?? []));
        await staged.stageNews(tx, await news(tx, received));
      }),
    ],
    changelogCovers: [topics.sendCommands, topics.messageStatus, topics.inboundMessages],
  };
}

/** The message ids of the records of a batch the live projection (the schema a replay will replace) has not applied. */
function newsReader(): (tx: PoolClient, records: readonly Applied<{ message_id: string }>[]) => Promise<string[]> {
  // The live projection's next offset per partition, as last read: it only grows, so a record
  // below it was applied live, and it is read again only for records at or past it.
  const liveNext = new Map<string, number>();
  return async (tx, records) => {
    const last = records[records.length - 1]?.meta;
    if (last === undefined) return [];
    const partition = `${last.topic}:${last.partition}`;
    if (last.offset >= (liveNext.get(partition) ?? 0)) liveNext.set(partition, await liveNextOffset(tx, last));
    const from = liveNext.get(partition)!;
    return [...new Set(records.flatMap((r) => (r.value !== null && r.meta.offset >= from ? [r.value.message_id] : [])))];
  };
}

/** The first offset of the batch's partition the live projection (the schema a replay will replace) has not applied. */
async function liveNextOffset(tx: PoolClient, meta: Applied<unknown>['meta']): Promise<number> {
  const { rows } = await tx.query<{ present: boolean }>(`SELECT to_regclass('${tables.name}._offsets') IS NOT NULL AS present`);
  // Without a live projection there is nothing to take over from.
  if (rows[0]?.present !== true) return Infinity;
  const { rows: offsets } = await tx.query<{ next_offset: string }>(`SELECT next_offset FROM ${tables.name}._offsets WHERE topic = $1 AND partition = $2`, [meta.topic, meta.partition]);
  return offsets[0] === undefined ? 0 : Number(offsets[0].next_offset);
}
