import { topics } from '../../topics/index.js';
import { onBatch, sendsTakenInTime, valuesOf, type Projection } from '../runtime/projection.js';
import { inboundRow, sendRow } from './rows.js';
import { applyStatuses, deriveConversations, recordMessages } from './store.js';
import { changeRow, changesDdl, isChange, recordChanges } from './changes.js';

/**
 * The unified inbox: one conversation per (project, customer phone jid or group jid) across all
 * of the project's numbers, with its messages. Built from our sends, their status facts and the
 * received messages (with the owner's own sends from the phone).
 */
export const conversationsProjection: Projection = {
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
  deriveAfterReplay: deriveConversations,
  handlers: [
    onBatch(topics.sendCommands, async (tx, commands, scope) => {
      const sends = valuesOf(sendsTakenInTime(commands));
      await recordMessages(tx, sends.filter((s) => !isChange(s)).map(sendRow), scope);
      await recordChanges(tx, sends.flatMap((s) => changeRow(s) ?? []));
    }),
    onBatch(topics.messageStatus, (tx, facts) => applyStatuses(tx, valuesOf(facts))),
    onBatch(topics.inboundMessages, async (tx, received, scope) => {
      const messages = valuesOf(received);
      await recordMessages(tx, messages.filter((m) => !isChange(m)).map(inboundRow), scope);
      await recordChanges(tx, messages.flatMap((m) => changeRow(m) ?? []));
    }),
  ],
};
