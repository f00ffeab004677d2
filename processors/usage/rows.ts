import type { AccountId, InstanceId, ProjectId } from '../../schemas/ids.js';
import { SendOriginValues, type MessageState, type SendCommand, type UsageRecord } from '../../schemas/records.js';

/** One counted thing: the unit both usage stores (ClickHouse and the Postgres counters) add up. */
export interface UsageRow {
  /** What is counted, unique within its kind: a repeat of it counts once. */
  readonly event_id: string;
  readonly account_id: AccountId;
  readonly project_id: ProjectId | null;
  readonly instance_id: InstanceId | null;
  readonly kind: 'message_sent' | 'media_stored';
  /** Messages, or bytes (negative when stored media is removed). */
  readonly quantity: number;
  readonly occurred_at: number;
}

/**
 * Every accepted send counts one message, whatever its type (an OTP's two bubbles are one send,
 * spec 4.2). Counted by message_id: a command written twice for one send (an idempotent retry
 * after a crash) counts once.
 */
export function sendUsage(command: SendCommand): UsageRow {
  return {
    event_id: command.message_id,
    account_id: command.account_id,
    project_id: command.project_id,
    instance_id: command.instance_id,
    kind: 'message_sent',
    quantity: 1,
    occurred_at: command.occurred_at,
  };
}

/**
 * The send a message's latest state on `gw.messages.state` (the history's changelog) is, counted as
 * `sendUsage` counts its command, which retention deletes long before the changelog forgets it:
 * a message of ours (direction out, origin api or campaign) once its send is applied (a type), or
 * our edit or deletion once a status fact gave it a row (its change carries the send's time). A
 * received message, or a row only status facts have made so far, counts nothing.
 */
export function sentUsage(state: MessageState): UsageRow | undefined {
  const row = state.message;
  if (state.account_id === null || row === null || row.direction !== 'out') return undefined;
  const ours = row.type !== null && (SendOriginValues as readonly (string | null)[]).includes(row.origin);
  const occurredAt = ours ? row.occurred_at : state.change?.occurred_at;
  if (occurredAt === undefined) return undefined;
  return {
    event_id: state.message_id,
    account_id: state.account_id,
    project_id: state.project_id,
    instance_id: state.instance_id,
    kind: 'message_sent',
    quantity: 1,
    occurred_at: occurredAt,
  };
}

/**
 * Stored media counts its bytes. Other usage records are not counted here: sends are counted
 * from their commands, and thresholds are derived from the counts.
 */
export function storedMediaUsage(record: UsageRecord): UsageRow | undefined {
  if (record.kind !== 'media_stored') return undefined;
  return {
    event_id: record.event_id,
    account_id: record.account_id,
    project_id: record.project_id,
    instance_id: record.instance_id,
    kind: 'media_stored',
    quantity: record.quantity,
    occurred_at: record.occurred_at,
  };
}
