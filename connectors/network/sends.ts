import type { Logger } from 'pino';
import type { InstanceId } from '../../schemas/ids.js';
import type { MessageStatus, SendCommand } from '../../schemas/records.js';
import { continueTrace, GatewayFailure, topics, type Hop, type OutgoingRecord, type Producer, type RecordHeaders } from '../../topics/index.js';
import type { NumberSession, SendResult, StatusFact } from './connector.js';
import type { ExecutedSends, SendOutcome, SendRef } from './executed.js';
import { statusRecord } from './fact-records.js';
import type { SendMetrics } from './metrics.js';
import type { KeyedSerial } from '../../shared/serial.js';
import type { OpenedOtpCodes } from './otp-keys.js';

export interface SendsDeps {
  readonly executed: ExecutedSends;
  /** The per-number writer of the role: status records go out in order with the number's other records. */
  readonly writer: KeyedSerial;
  readonly producer: Producer;
  readonly logger: Logger;
  readonly metrics: SendMetrics;
  /** The OTP codes the sessions open: loaded before their send, destroyed once it is done. */
  readonly otp: OpenedOtpCodes;
  /** The number as this worker holds it; undefined when the number is unknown here. */
  readonly numberOf: (instanceId: string) => { readonly session?: NumberSession } | undefined;
}

/**
 * How long a send claimed and left unfinished (its run stopped) makes a receipt of ours that is not
 * found wait: the send goes again once its command is read again, within a fail-over; a claim whose
 * command was dead-lettered stays unfinished for good.
 */
const UNFINISHED_CLAIM_MS = 10 * 60_000;

const notConnected = (reason: string): SendResult => ({ kind: 'failed', error_code: 'not_connected', error_reason: reason });
const otpExpired: SendResult = {
  kind: 'failed',
  error_code: 'otp_expired',
  error_reason: 'the code was destroyed before this send could go out: its lifetime (expiry_minutes, or 10 minutes) had passed',
};

/** A status record waiting in its number's writer for the outcome of its send to be stored. */
interface PendingStatus {
  readonly send: SendRef;
  readonly outcome: Promise<SendOutcome>;
  readonly hop: Hop;
}

/** A receipt waiting in its number's writer; `current` is false once the session that saw it has closed. */
interface PendingReceipt {
  readonly instanceId: InstanceId;
  readonly fact: StatusFact;
  readonly current: () => boolean;
}

/**
 * Executes each send once: it is claimed in `connector.executed` before it goes to the network,
 * and its outcome is stored there before its status record is written, so a command read again
 * (after a crash or a rebalance) repeats the status record, never the send. A send claimed by a run
 * that stopped before storing its outcome is sent again under the same network ids, which the
 * network takes once. A batch of commands takes one statement to claim and one to store the outcomes.
 */
export class Sends {
  /** Results whose outcome could not be stored yet (Postgres failed): the retried batch reuses them. */
  private readonly unfinished = new Map<string, SendResult>();

  constructor(private readonly deps: SendsDeps) {}

  /**
   * Executes the commands in order; resolves once their status records are on the log. Each send
   * is a `send.network` hop, a child of the hop that wrote its command (`headers`, of each command's record).
   */
  async send(commands: readonly SendCommand[], headers: readonly RecordHeaders[] = []): Promise<void> {
    const { executed } = this.deps;
    const sends = firstOfEachMessage(commands);
    const headersOf = new Map(commands.map((command, i) => [command, headers[i]]));
    const hops = sends.map((send) =>
      continueTrace('send.network', headersOf.get(send), { attributes: { message_id: send.message_id, account_id: send.account_id } }),
    );
    const claims = await executed.claim(sends).catch((err: unknown) => {
      for (const hop of hops) hop.end(err instanceof Error ? err.message : String(err));
      throw err;
    });
    for (const hop of hops) hop.mark('claimed');
    const stored = deferred<Map<string, SendOutcome>>();
    const executing: { send: SendCommand; result: Promise<SendResult> }[] = [];
    const written: Promise<void>[] = [];
    for (const [i, command] of sends.entries()) {
      const claim = claims[i]!;
      if (claim.kind === 'elsewhere') {
        hops[i]!.end();
        continue;
      }
      if (claim.kind === 'done') {
        written.push(this.writeStatus(command, Promise.resolve(claim.outcome), hops[i]!));
        continue;
      }
      // Started in order, each without waiting for the answer to the one before (see `NumberSession.send`).
      // An interrupted send goes again under the same network ids (`sentNetworkId`): the network keeps one message per id.
      const unfinished = this.unfinished.get(command.message_id);
      const hop = hops[i]!;
      const result = (unfinished ? Promise.resolve(unfinished) : this.execute(command)).finally(() => hop.mark('sent'));
      executing.push({ send: command, result });
      // Queued in the number's writer now, before the network can answer with a receipt: sent comes first.
      written.push(this.writeStatus(command, stored.promise.then((outcomes) => outcomes.get(command.message_id)!), hop));
    }
    const results: { send: SendRef; result: SendResult }[] = [];
    for (const { send, result } of executing) {
      results.push({ send, result: await result });
      if (results[results.length - 1]!.result.kind === 'accepted') this.deps.metrics.sent(send.occurred_at);
      this.unfinished.set(send.message_id, results[results.length - 1]!.result);
    }
    const finishing = results.length === 0 ? Promise.resolve(new Map<string, SendOutcome>()) : executed.finish(results);
    finishing.then(stored.resolve, stored.reject);
    try {
      // Rejects with the first failure (storing the outcomes, or writing a status record).
      await Promise.all(written);
    } catch (err) {
      // A batch that fails for good is not tried again (its commands are dead-lettered): what it sent is forgotten.
      if (GatewayFailure.from(err).kind === 'permanent') for (const { send } of results) this.unfinished.delete(send.message_id);
      throw err;
    }
    for (const { send } of results) this.unfinished.delete(send.message_id);
    await this.destroyCodes(commands);
  }

  /** Once the outcomes are stored, no send of the batch needs its OTP code again: its key goes. */
  private async destroyCodes(sends: readonly SendCommand[]): Promise<void> {
    const sealed = sends.flatMap((s) => (s.content.kind === 'otp' ? [s.content.code_ciphertext] : []));
    if (sealed.length === 0) return;
    // A key left behind by a failure here is deleted when its lifetime ends (the role's purge).
    await this.deps.otp.done(sealed).catch((err: unknown) => this.deps.logger.warn({ err }, 'destroying OTP keys failed'));
  }

  /** Writes a receipt of one of our sends; receipts of messages we did not send are ignored. */
  writeReceipt(instanceId: InstanceId, fact: StatusFact, current: () => boolean): Promise<void> {
    return this.deps.writer.gather(instanceId, this.writeReceipts, { instanceId, fact, current });
  }

  private async execute(command: SendCommand): Promise<SendResult> {
    const number = this.deps.numberOf(command.instance_id);
    if (!number) return notConnected('unknown number');
    if (!number.session) return notConnected('the number has no session on this worker');
    try {
      if (command.content.kind === 'otp' && !(await this.deps.otp.load(command.content.code_ciphertext))) return otpExpired;
      return await number.session.send(command);
    } catch (err) {
      this.deps.logger.error({ err, messageId: command.message_id }, 'send failed');
      return { kind: 'failed', error_code: 'internal_error', error_reason: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Ends the send's hop once its status record is on the log. */
  private writeStatus(send: SendRef, outcome: Promise<SendOutcome>, hop: Hop): Promise<void> {
    // Handled where the batch fails; the writer may only await it later.
    outcome.catch(() => undefined);
    const written = this.deps.writer.gather(send.instance_id, this.writeStatuses, { send, outcome, hop });
    written.then(() => hop.end(), (err: unknown) => hop.end(err instanceof Error ? err.message : String(err)));
    return written;
  }

  private readonly writeStatuses = async (pending: readonly PendingStatus[]): Promise<void> => {
    const records: OutgoingRecord<MessageStatus>[] = [];
    for (const { send, outcome, hop } of pending) records.push({ key: send.instance_id, value: statusOf(send, await outcome), headers: hop.headers });
    await this.deps.producer.send(topics.messageStatus, records);
  };

  /**
   * Of receipts whose send is not found, one that may be of a send whose outcome is not stored yet:
   * one this worker made, or (for a receipt the network says is ours) one a stopped run claimed.
   */
  private async beforeItsSend(instanceId: InstanceId, missing: readonly PendingReceipt[]): Promise<PendingReceipt | undefined> {
    const here = missing.find(({ fact }) => this.unstored(fact.wa_message_id));
    if (here) return here;
    const ours = missing.find(({ fact }) => fact.ours);
    return ours && (await this.deps.executed.claimedUnfinished(instanceId, UNFINISHED_CLAIM_MS)) ? ours : undefined;
  }

  /** Whether a send this worker made got `waMessageId` and its outcome is not stored yet. */
  private unstored(waMessageId: string): boolean {
    for (const result of this.unfinished.values()) if (result.kind === 'accepted' && result.wa_message_id === waMessageId) return true;
    return false;
  }

  private readonly writeReceipts = async (pending: readonly PendingReceipt[]): Promise<void> => {
    const receipts = pending.filter((p) => p.current());
    const instanceId = receipts[0]?.instanceId;
    if (instanceId === undefined) return;
    const sends = await this.deps.executed.byNetworkIds(instanceId, receipts.map((r) => r.fact.wa_message_id));
    // Dropped now, a receipt of a send whose outcome is stored later would be lost: it fails, and its session tries it again.
    const early = await this.beforeItsSend(instanceId, receipts.filter(({ fact }) => !sends.has(fact.wa_message_id)));
    if (early) throw new Error(`a receipt of ${early.fact.wa_message_id} came before its send's outcome was stored`);
    const records = receipts.flatMap(({ fact }) => {
      const send = sends.get(fact.wa_message_id);
      return send ? [{ key: instanceId, value: statusRecord(send, fact) }] : [];
    });
    if (records.length > 0) await this.deps.producer.send(topics.messageStatus, records);
  };
}

function statusOf(send: SendRef, { result, finished_at: at }: SendOutcome): MessageStatus {
  return result.kind === 'accepted'
    ? statusRecord(send, { status: 'sent', wa_message_id: result.wa_message_id, error_code: null, error_reason: null, occurred_at: at })
    : statusRecord(send, { status: 'failed', wa_message_id: null, error_code: result.error_code, error_reason: result.error_reason, occurred_at: at });
}

/** A message id repeated in one batch is the same send: its first command stands for it. */
function firstOfEachMessage(commands: readonly SendCommand[]): SendCommand[] {
  const seen = new Set<string>();
  return commands.filter((c) => !seen.has(c.message_id) && seen.add(c.message_id));
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
