import type { Logger } from 'pino';
import type { InstanceId } from '../../schemas/ids.js';
import type { SendCommand } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import type { NumberSession, SendResult, StatusFact } from './connector.js';
import type { ExecutedSends, SendOutcome, SendRef } from './executed.js';
import { statusRecord } from './fact-records.js';
import type { KeyedSerial } from './serial.js';

export interface SendsDeps {
  readonly executed: ExecutedSends;
  /** The per-number writer of the role: status records go out in order with the number's other records. */
  readonly writer: KeyedSerial;
  readonly producer: Producer;
  readonly logger: Logger;
  /** The number as this worker holds it; undefined when the number is unknown here. */
  readonly numberOf: (instanceId: string) => { readonly session?: NumberSession } | undefined;
}

const interrupted: SendResult = {
  kind: 'failed',
  error_code: 'internal_error',
  error_reason: 'the connector stopped during this send; the network may have taken it',
};
const notConnected = (reason: string): SendResult => ({ kind: 'failed', error_code: 'not_connected', error_reason: reason });

/**
 * Executes each send once: it is claimed in `connector.executed` before it goes to the network,
 * and its outcome is stored there before its status record is written, so a command read again
 * (after a crash or a rebalance) repeats the status record, never the send.
 */
export class Sends {
  /** Results whose outcome could not be stored yet (Postgres failed): the retried batch reuses them. */
  private readonly unfinished = new Map<string, SendResult>();

  constructor(private readonly deps: SendsDeps) {}

  async send(command: SendCommand): Promise<void> {
    const { executed, writer } = this.deps;
    const claim = await executed.claim(command);
    if (claim.kind === 'elsewhere') return;
    if (claim.kind === 'done') return writer.run(command.instance_id, () => this.writeOutcome(command, claim.outcome));
    const result = claim.kind === 'new' ? await this.execute(command) : (this.unfinished.get(command.message_id) ?? interrupted);
    this.unfinished.set(command.message_id, result);
    await writer.run(command.instance_id, async () => this.writeOutcome(command, await executed.finish(command.message_id, result)));
    this.unfinished.delete(command.message_id);
  }

  /** Writes a receipt of one of our sends; receipts of messages we did not send are ignored. Runs inside the number's writer. */
  async writeReceipt(instanceId: InstanceId, fact: StatusFact): Promise<void> {
    const send = await this.deps.executed.byNetworkId(instanceId, fact.wa_message_id);
    if (send) await this.deps.producer.send(topics.messageStatus, [{ key: instanceId, value: statusRecord(send, fact) }]);
  }

  private async execute(command: SendCommand): Promise<SendResult> {
    const number = this.deps.numberOf(command.instance_id);
    if (!number) return notConnected('unknown number');
    if (!number.session) return notConnected('the number has no session on this worker');
    try {
      return await number.session.send(command);
    } catch (err) {
      this.deps.logger.error({ err, messageId: command.message_id }, 'send failed');
      return { kind: 'failed', error_code: 'internal_error', error_reason: err instanceof Error ? err.message : String(err) };
    }
  }

  private async writeOutcome(send: SendRef, { result, finished_at: at }: SendOutcome): Promise<void> {
    const status =
      result.kind === 'accepted'
        ? statusRecord(send, { status: 'sent', wa_message_id: result.wa_message_id, error_code: null, error_reason: null, occurred_at: at })
        : statusRecord(send, { status: 'failed', wa_message_id: null, error_code: result.error_code, error_reason: result.error_reason, occurred_at: at });
    await this.deps.producer.send(topics.messageStatus, [{ key: send.instance_id, value: status }]);
  }
}
