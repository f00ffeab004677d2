import type { SendCommand } from '../../schemas/records.js';
import { partitionOf, takenInTime, topics, type Producer, type RecordHeaders } from '../../topics/index.js';
import { withDeadline } from '../../shared/deadline.js';
import { SendRefused } from './refused.js';

/** How long a send waits for the log to take its command; past it the send is refused (503) for good. */
export const SEND_DEADLINE_MS = 10_000;

/**
 * How much longer the API listens for the broker's answer after the deadline. The answer decides:
 * its append time says whether the log took the command in time. A broker that took the command
 * and died before answering answers once it is back (the producer retries the same record, which
 * the idempotent producer does not append twice): waiting that long keeps a 503 true across a
 * broker restart, and lets API and broker clocks differ too.
 */
const ANSWER_WINDOW_MS = 60_000;

/**
 * Writes a send command with its deadline and tells whether the send is accepted. It is refused
 * (503 `service_unavailable`) when the log does not take it in time: the command may still reach
 * the log later (the producer retries on its own), and then every reader passes over it, so a
 * client may retry a 503, with or without an Idempotency-Key, without messaging anyone twice.
 */
export async function appendSend(producer: Producer, command: Omit<SendCommand, 'expires_at'>, trace?: RecordHeaders): Promise<void> {
  const [taken] = await appendSends(producer, [command], trace);
  if (!taken) throw new SendRefused('service_unavailable');
}

/**
 * Writes send commands with one deadline in one append and tells, for each, whether the log took
 * it in time (a campaign's tick writes many). One not taken in time is passed over by every reader.
 * `trace`: the headers of the hop that writes them, when it is traced.
 */
export async function appendSends(producer: Producer, commands: readonly Omit<SendCommand, 'expires_at'>[], trace?: RecordHeaders): Promise<boolean[]> {
  if (commands.length === 0) return [];
  const expiresAt = Date.now() + SEND_DEADLINE_MS;
  const taken = await withDeadline(
    producer.send(topics.sendCommands, commands.map((command) => ({ key: command.instance_id, value: { ...command, expires_at: expiresAt }, headers: trace }))),
    SEND_DEADLINE_MS + ANSWER_WINDOW_MS,
  );
  return commands.map((command) => {
    const takenAt = taken.get(partitionOf(command.instance_id, topics.sendCommands.partitions)) ?? Math.max(...taken.values());
    // No append time (a topic still stamped at creation): the record's own time is earlier than the deadline.
    return !Number.isFinite(takenAt) || takenInTime({ expires_at: expiresAt }, takenAt);
  });
}
