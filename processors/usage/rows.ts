import type { AccountId, InstanceId, ProjectId } from '../../schemas/ids.js';
import type { SendCommand, UsageRecord } from '../../schemas/records.js';

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
