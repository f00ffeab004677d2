import { InboundOriginValues, type DeliveryAttempt, type InboundMessage, type MessageState, type MessageStatus, type SendCommand } from '../../schemas/records.js';
import { takenInTime, topics } from '../../topics/index.js';
import { inboundContent, sendContent } from '../../events/content.js';
import { isChange } from '../conversations/changes.js';
import { dateTimeText, tableInput, type ClickHouseTable, type TableRow } from '../runtime/clickhouse-table.js';
import { sentUsage } from '../usage/rows.js';

/**
 * Which record a row was read from, the ReplacingMergeTree's version: a row from the log record
 * itself (a command, a status fact) wins over the same row read from the history's changelog
 * `gw.messages.state` (a state written before states carried the campaign lacks it). The changelog is
 * read live as well as on replay, so a replay rebuilds what the live writer wrote.
 */
const FROM_CHANGELOG = 1;
const FROM_RECORD = 2;

const engine = (key: string, version?: string) => `ENGINE = ReplacingMergeTree${version ? `(${version})` : ''}\nORDER BY (${key})`;

/** One row per send the log took in time, keyed by message id (a command written twice is one send). */
const messageSends: ClickHouseTable = {
  name: 'message_sends',
  ddl: (table) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  account_id String,
  project_id String,
  instance_id String,
  message_id String,
  recipient String,
  campaign_id Nullable(String),
  type LowCardinality(String),
  origin LowCardinality(String),
  occurred_at DateTime64(3, 'UTC'),
  source UInt8
) ${engine('account_id, message_id', 'source')}`,
  inputs: [
    tableInput(topics.sendCommands, (command, record) => (takenInTime(command, record.timestamp) ? [sendOf(command)] : [])),
    tableInput(topics.messageStates, (state) => sendOfState(state)),
  ],
  changelogCovers: [topics.sendCommands],
};

function sendOf(command: SendCommand): TableRow {
  return {
    account_id: command.account_id,
    project_id: command.project_id,
    instance_id: command.instance_id,
    message_id: command.message_id,
    recipient: command.to,
    campaign_id: command.campaign_id,
    type: sendContent(command.content).type,
    origin: command.origin,
    occurred_at: dateTimeText(command.occurred_at),
    source: FROM_RECORD,
  };
}

/** The send a message's state is, as usage counts it; an edit or deletion's row, made by status facts, has no origin: only the API sends them. */
function sendOfState(state: MessageState): TableRow[] {
  const sent = sentUsage(state);
  if (!sent || !state.message) return [];
  return [
    {
      account_id: sent.account_id,
      project_id: state.project_id,
      instance_id: state.instance_id,
      message_id: state.message_id,
      recipient: state.message.jid,
      campaign_id: state.campaign_id,
      type: state.message.type ?? state.change?.change_kind ?? '',
      origin: state.message.origin ?? 'api',
      occurred_at: dateTimeText(sent.occurred_at),
      source: FROM_CHANGELOG,
    },
  ];
}

/** One row per message and status (sent, delivered, read, failed): a repeated receipt is one row. */
const messageStatuses: ClickHouseTable = {
  name: 'message_statuses',
  ddl: (table) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  account_id String,
  project_id String,
  instance_id String,
  message_id String,
  status LowCardinality(String),
  error_code Nullable(String),
  error_reason Nullable(String),
  occurred_at DateTime64(3, 'UTC'),
  source UInt8
) ${engine('account_id, message_id, status', 'source')}`,
  inputs: [tableInput(topics.messageStatus, (fact) => [statusOf(fact)]), tableInput(topics.messageStates, (state) => statusesOfState(state))],
  changelogCovers: [topics.messageStatus],
};

function statusOf(fact: MessageStatus): TableRow {
  return {
    account_id: fact.account_id,
    project_id: fact.project_id,
    instance_id: fact.instance_id,
    message_id: fact.message_id,
    status: fact.status,
    error_code: fact.error_code,
    error_reason: fact.error_reason,
    occurred_at: dateTimeText(fact.occurred_at),
    source: FROM_RECORD,
  };
}

/** The statuses a message's state records the first time of, a failure with its reason. */
function statusesOfState(state: MessageState): TableRow[] {
  const row = state.message;
  if (state.account_id === null || row === null || row.direction !== 'out') return [];
  const times = { sent: row.sent_at, delivered: row.delivered_at, read: row.read_at, failed: row.failed_at };
  return Object.entries(times).flatMap(([status, at]) =>
    at === null
      ? []
      : [
          {
            account_id: state.account_id,
            project_id: state.project_id,
            instance_id: state.instance_id,
            message_id: state.message_id,
            status,
            error_code: status === 'failed' ? row.error_code : null,
            error_reason: status === 'failed' ? state.error_reason : null,
            occurred_at: dateTimeText(at),
            source: FROM_CHANGELOG,
          },
        ],
  );
}

/** One row per message received on a number (origin customer) or written from its phone by its owner (origin external); edits and deletions are not messages. */
const inboundMessages: ClickHouseTable = {
  name: 'inbound_messages',
  ddl: (table) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  account_id String,
  project_id String,
  instance_id String,
  message_id String,
  chat_jid String,
  type LowCardinality(String),
  origin LowCardinality(String),
  occurred_at DateTime64(3, 'UTC')
) ${engine('account_id, message_id')}`,
  inputs: [tableInput(topics.inboundMessages, (message) => inboundOf(message)), tableInput(topics.messageStates, (state) => inboundOfState(state))],
  changelogCovers: [topics.inboundMessages],
};

function inboundOf(message: InboundMessage): TableRow[] {
  if (isChange(message)) return [];
  const type = inboundContent(message.content).type;
  const { account_id, project_id, instance_id, message_id, origin } = message;
  return [{ account_id, project_id, instance_id, message_id, chat_jid: message.chat_jid, type, origin, occurred_at: dateTimeText(message.occurred_at) }];
}

function inboundOfState(state: MessageState): TableRow[] {
  const row = state.message;
  const received = row !== null && row.type !== null && (InboundOriginValues as readonly (string | null)[]).includes(row.origin);
  if (state.account_id === null || !received) return [];
  const { account_id, project_id, instance_id, message_id } = state;
  return [{ account_id, project_id, instance_id, message_id, chat_jid: row.jid, type: row.type, origin: row.origin, occurred_at: dateTimeText(row.occurred_at) }];
}

/** One row per webhook delivery attempt (account webhooks and partner webhooks). */
const webhookDeliveries: ClickHouseTable = {
  name: 'webhook_deliveries',
  ddl: (table) => `CREATE TABLE IF NOT EXISTS \`${table}\` (
  account_id String,
  project_id String,
  instance_id String,
  attempt_id String,
  delivery_id String,
  event_id String,
  event_type LowCardinality(String),
  target_kind LowCardinality(String),
  target_id String,
  attempt UInt16,
  trigger LowCardinality(String),
  outcome LowCardinality(String),
  response_status Nullable(UInt16),
  error Nullable(String),
  duration_ms UInt32,
  occurred_at DateTime64(3, 'UTC')
) ${engine('account_id, attempt_id')}`,
  inputs: [tableInput(topics.deliveryAttempts, (attempt) => [deliveryOf(attempt)])],
};

function deliveryOf(a: DeliveryAttempt): TableRow {
  return {
    account_id: a.account_id,
    project_id: a.project_id ?? '',
    instance_id: a.instance_id ?? '',
    attempt_id: a.attempt_id,
    delivery_id: a.delivery_id,
    event_id: a.event_id,
    event_type: a.event_type,
    target_kind: a.target_kind,
    target_id: a.target_id,
    attempt: a.attempt,
    trigger: a.trigger,
    outcome: a.outcome,
    response_status: a.response_status,
    error: a.error,
    duration_ms: Math.max(0, Math.round(a.duration_ms)),
    occurred_at: dateTimeText(a.occurred_at),
  };
}

/** The analyst tables (docs/analytics.md), written live and rebuilt by `gateway replay analytics`. */
export const analyticsTables: readonly ClickHouseTable[] = [messageSends, messageStatuses, inboundMessages, webhookDeliveries];
