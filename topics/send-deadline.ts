import type { SendCommand } from '../schemas/records.js';

/**
 * A send the API refused with 503 must never go out. The API stamps each command with the instant
 * it stops waiting for the log (`expires_at`), and the send topic keeps the instant the broker took
 * each record (`LogAppendTime`). A command taken after its deadline was refused: the API, from the
 * broker's answer, and every reader of the topic (the connector, the conversation and usage
 * projections) decide by the same two numbers, so they always agree.
 */
export function takenInTime(command: Pick<SendCommand, 'expires_at'>, takenAt: number): boolean {
  return command.expires_at === null || takenAt <= command.expires_at;
}
