import type { PoolClient } from 'pg';
import type { InboundMessage, MessageState, MessageStatus, SendCommand } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import { onBatch, sendsTakenInTime, valuesOf, type Handler } from '../runtime/projection.js';

/**
 * How a replay of the `campaigns` projection rebuilds what the runner marked and the recipients'
 * outcomes. Every input may come before the recipients it concerns (a replay reads the topics in
 * its own interleaving), so each fact is staged by message id and the swap folds them into the
 * recipients at once, with the live projection's rules: a recipient is dispatched once its send is
 * on the log (the command, or its message's state past the command's retention), a delivery or a
 * read also proves the send, each time is the first, a reply is a customer's message to the
 * number after the send. A recipient whose message id has any fact is dispatched, so the runner
 * never emits it again.
 */

export const replayedDdl = [
  `CREATE UNLOGGED TABLE IF NOT EXISTS staged_sends (
    message_id text NOT NULL, instance_id text NOT NULL, queued_at timestamptz, sent_at timestamptz, delivered_at timestamptz,
    read_at timestamptz, failed_at timestamptz, error_code text, error_reason text
  )`,
  `CREATE UNLOGGED TABLE IF NOT EXISTS staged_replies (instance_id text NOT NULL, jid text NOT NULL, at timestamptz NOT NULL)`,
];

interface StagedSend {
  readonly message_id: string;
  readonly instance_id: string;
  readonly queued_at?: number | null;
  readonly sent_at?: number | null;
  readonly delivered_at?: number | null;
  readonly read_at?: number | null;
  readonly failed_at?: number | null;
  readonly error_code?: string | null;
  readonly error_reason?: string | null;
}

interface StagedReply {
  readonly instance_id: string;
  readonly jid: string;
  readonly at: number;
}

const earliest = (...times: readonly (number | null)[]) => {
  const known = times.filter((t): t is number => t !== null);
  return known.length === 0 ? null : Math.min(...known);
};

function sendOfCommand(command: SendCommand): StagedSend[] {
  return command.campaign_id === null ? [] : [{ message_id: command.message_id, instance_id: command.instance_id, queued_at: command.occurred_at }];
}

/** A status fact as the live projection reads it: a delivery or a read also proves the send. */
function sendOfStatus(fact: MessageStatus): StagedSend[] {
  if (fact.campaign_id === null) return [];
  const base = { message_id: fact.message_id, instance_id: fact.instance_id };
  if (fact.status === 'failed') return [{ ...base, failed_at: fact.occurred_at, error_code: fact.error_code, error_reason: fact.error_reason }];
  return [{
    ...base,
    sent_at: fact.occurred_at,
    delivered_at: fact.status === 'sent' ? null : fact.occurred_at,
    read_at: fact.status === 'read' ? fact.occurred_at : null,
  }];
}

/** A campaign send's state (origin campaign: states written before they carried the campaign id have it too). */
function sendOfState(state: MessageState): StagedSend[] {
  const row = state.message;
  if (row === null || row.origin !== 'campaign') return [];
  return [{
    message_id: state.message_id,
    instance_id: state.instance_id,
    queued_at: row.queued_at,
    sent_at: earliest(row.sent_at, row.delivered_at, row.read_at),
    delivered_at: earliest(row.delivered_at, row.read_at),
    read_at: row.read_at,
    failed_at: row.failed_at,
    error_code: row.error_code,
    error_reason: state.error_reason,
  }];
}

function replyOfMessage(message: InboundMessage): StagedReply[] {
  return message.origin === 'customer' && message.group === null ? [{ instance_id: message.instance_id, jid: message.chat_jid, at: message.occurred_at }] : [];
}

function replyOfState(state: MessageState): StagedReply[] {
  const row = state.message;
  return row !== null && row.origin === 'customer' && row.group_jid === null ? [{ instance_id: state.instance_id, jid: row.jid, at: row.occurred_at }] : [];
}

async function stageSends(tx: PoolClient, sends: readonly StagedSend[]): Promise<void> {
  if (sends.length === 0) return;
  const ms = (time: number | null | undefined) => (time == null ? null : new Date(time));
  const rows = sends.map((s) => ({
    ...s,
    queued_at: ms(s.queued_at), sent_at: ms(s.sent_at), delivered_at: ms(s.delivered_at), read_at: ms(s.read_at), failed_at: ms(s.failed_at),
  }));
  await tx.query(`INSERT INTO staged_sends SELECT * FROM json_populate_recordset(NULL::staged_sends, $1::json)`, [JSON.stringify(rows)]);
}

async function stageReplies(tx: PoolClient, replies: readonly StagedReply[]): Promise<void> {
  if (replies.length === 0) return;
  await tx.query(`INSERT INTO staged_replies SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])`, [
    replies.map((r) => r.instance_id),
    replies.map((r) => r.jid),
    replies.map((r) => new Date(r.at)),
  ]);
}

/** The replay's handlers of the sends' facts and the replies; the campaigns and their recipients are applied as live. */
export const replayedHandlers: readonly Handler<unknown>[] = [
  onBatch(topics.sendCommands, (tx, commands) => stageSends(tx, valuesOf(sendsTakenInTime(commands)).flatMap(sendOfCommand))),
  onBatch(topics.messageStatus, (tx, facts) => stageSends(tx, valuesOf(facts).flatMap(sendOfStatus))),
  onBatch(topics.inboundMessages, (tx, received) => stageReplies(tx, valuesOf(received).flatMap(replyOfMessage))),
  onBatch(topics.messageStates, async (tx, records) => {
    const states = valuesOf(records);
    await stageSends(tx, states.flatMap(sendOfState));
    await stageReplies(tx, states.flatMap(replyOfState));
  }),
];

/** At the swap: the staged facts folded into the recipients, then the staging tables dropped. */
export async function foldStaged(tx: PoolClient): Promise<void> {
  await tx.query(
    `UPDATE recipients r SET
       instance_id = f.instance_id,
       dispatched_at = coalesce(f.queued_at, f.sent_at, f.failed_at),
       sent_at = f.sent_at, delivered_at = f.delivered_at, read_at = f.read_at, failed_at = f.failed_at,
       error_code = f.error_code, error_reason = f.error_reason
     FROM (
       SELECT message_id, (array_agg(instance_id))[1] AS instance_id, min(queued_at) AS queued_at, min(sent_at) AS sent_at,
         min(delivered_at) AS delivered_at, min(read_at) AS read_at, min(failed_at) AS failed_at,
         (array_agg(error_code) FILTER (WHERE error_code IS NOT NULL))[1] AS error_code,
         (array_agg(error_reason) FILTER (WHERE error_reason IS NOT NULL))[1] AS error_reason
       FROM staged_sends GROUP BY message_id
     ) f
     WHERE r.message_id = f.message_id`,
  );
  await tx.query(
    `UPDATE recipients r SET replied_at = p.at
     FROM (
       SELECT r2.campaign_id, r2.idx, min(s.at) AS at FROM recipients r2
       JOIN staged_replies s ON s.instance_id = r2.instance_id AND s.jid = r2.to_jid AND s.at >= r2.dispatched_at
       GROUP BY r2.campaign_id, r2.idx
     ) p
     WHERE r.campaign_id = p.campaign_id AND r.idx = p.idx`,
  );
  await tx.query('DROP TABLE staged_sends, staged_replies');
}
