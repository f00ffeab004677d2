import type { Logger } from 'pino';
import type { SendCommand } from '../../schemas/records.js';
import { recordsOf, sendToDeadLetters, takenInTime, topics, untilSettled, type ConsumedBatch, type ConsumedRecord, type Producer, type RecordHeaders } from '../../topics/index.js';
import type { Addressed, ConnectorCommands } from './connector.js';

export interface CommandBatchesDeps {
  /** The connectors' own command topics and what applies their commands. */
  readonly controls: readonly ConnectorCommands[];
  /** Executes sends together, in order; resolves once their status records are on the log. `headers`: of each send's record. */
  readonly execute: (sends: readonly SendCommand[], headers: readonly RecordHeaders[]) => Promise<void>;
  /** Whether this worker holds the number a command is for. */
  readonly knows: (instanceId: string) => boolean;
  /** Whether the states of the partition are loaded. */
  readonly isLoaded: (partition: number) => boolean;
  /** True when a command for an unknown number should wait for states not applied yet. */
  readonly statesMayBeBehind: (partition: number, record: ConsumedRecord<unknown>) => Promise<boolean>;
  /** Pauses the commands of a partition until its states are loaded. */
  readonly pause: (partition: number) => void;
  /** Commits the next offset to read of a command topic. */
  readonly commit: (topic: string, partition: number, nextOffset: number) => Promise<void>;
  readonly producer: Producer;
  /** The topic prefix, for the dead-letter topic. */
  readonly prefix: string;
  readonly logger: Logger;
}

interface PendingSend {
  readonly command: SendCommand;
  readonly record: ConsumedRecord<unknown>;
}

/** One record of a command batch and what it asks for. */
type Step =
  | { readonly kind: 'send'; readonly record: ConsumedRecord<unknown>; readonly command: SendCommand }
  | { readonly kind: 'control'; readonly record: ConsumedRecord<unknown>; readonly command: Addressed; readonly controls: ConnectorCommands }
  | { readonly kind: 'unusable'; readonly record: ConsumedRecord<unknown>; readonly reason: string };

/**
 * Applies batches of command records of one partition in order: consecutive sends are executed
 * together, any other record first executes those before it. A send the log took after its
 * deadline, and a record that can never be applied, go to the dead letters and the rest goes on.
 */
export class CommandBatches {
  constructor(private readonly deps: CommandBatchesDeps) {}

  async apply(batch: ConsumedBatch): Promise<void> {
    const { deps } = this;
    if (!deps.isLoaded(batch.partition)) {
      deps.pause(batch.partition);
      return;
    }
    let next: number | undefined;
    const applied = async (offset: number) => {
      batch.resolve(offset);
      next = offset + 1;
      await batch.heartbeat();
    };
    let sends: PendingSend[] = [];
    /** Executes the sends gathered so far; false when the batch stopped first. */
    const flush = async () => {
      const last = sends[sends.length - 1];
      if (!last) return true;
      if (!(await this.execute(batch, sends))) return false;
      sends = [];
      await applied(last.record.offset);
      return true;
    };
    try {
      for (const step of stepsOf(batch, deps.controls)) {
        const { record } = step;
        if (!batch.isRunning()) break;
        if (step.kind === 'unusable') {
          if (!(await flush())) break;
          await this.deadLetter(record, step.reason);
        } else {
          if (!deps.knows(step.command.instance_id) && (await deps.statesMayBeBehind(batch.partition, record))) {
            if (await flush()) deps.pause(batch.partition);
            break;
          }
          if (step.kind === 'send') {
            if (takenInTime(step.command, record.timestamp)) {
              sends.push({ command: step.command, record });
              continue;
            }
            if (!(await flush())) break;
            await this.deadLetter(record, refusedReason(step.command, record.timestamp));
          } else {
            if (!(await flush())) break;
            await this.control(step.controls, step.command);
          }
        }
        await applied(record.offset);
      }
      if (batch.isRunning()) await flush();
    } finally {
      // Also when a heartbeat says the group rebalances: the next owner starts after what was done.
      if (next !== undefined) {
        await deps.commit(batch.topic, batch.partition, next).catch((err: unknown) => deps.logger.warn({ err }, 'command offset commit failed'));
      }
    }
  }

  /**
   * Executes sends together, retrying transient failures; when they fail for good (a command
   * Postgres cannot store, a bug), each is executed alone so that only the one at fault is
   * dead-lettered. False when the batch stopped first.
   */
  private async execute(batch: ConsumedBatch, sends: readonly PendingSend[]): Promise<boolean> {
    const settled = await untilSettled(() => this.deps.execute(sends.map((s) => s.command), sends.map((s) => s.record.headers)), {
      isRunning: () => batch.isRunning(),
      heartbeat: () => batch.heartbeat(),
      logger: this.deps.logger,
      what: 'executing sends',
    });
    if (settled.kind !== 'failed') return settled.kind === 'done';
    const [only] = sends;
    if (sends.length === 1 && only) {
      await this.deadLetter(only.record, settled.failure.message);
      return true;
    }
    for (const send of sends) if (!(await this.execute(batch, [send]))) return false;
    return true;
  }

  private async control(controls: ConnectorCommands, command: Addressed): Promise<void> {
    try {
      await controls.apply(command);
    } catch (err) {
      this.deps.logger.warn({ err, instanceId: command.instance_id, topic: controls.topic.name }, 'connector command failed');
    }
  }

  private async deadLetter(record: ConsumedRecord<unknown>, reason: string): Promise<void> {
    this.deps.logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'command dead-lettered');
    await sendToDeadLetters(this.deps.producer, this.deps.prefix, record, { 'x-dead-consumer': 'connector' }, reason);
  }
}

/** The records of a batch (the sends, or one connector's commands) with what each asks for. */
function stepsOf(batch: ConsumedBatch, controls: readonly ConnectorCommands[]): Step[] {
  // A batch holds the records of one topic: at most one of these lists is not empty.
  return [
    ...recordsOf(batch, topics.sendCommands).map((record) => usable(record, (command): Step => ({ kind: 'send', record, command }))),
    ...controls.flatMap((c) => recordsOf(batch, c.topic).map((record) => usable(record, (command): Step => ({ kind: 'control', record, command, controls: c })))),
  ];
}

/** The step of a record with a command; one that cannot be read or is empty is unusable. */
function usable<C>(record: ConsumedRecord<C>, step: (command: C) => Step): Step {
  if (!record.decoded.ok) return { kind: 'unusable', record, reason: record.decoded.error.message };
  if (record.decoded.value === null) return { kind: 'unusable', record, reason: 'empty command' };
  return step(record.decoded.value);
}

/** Why a send is not executed: the API answered 503 before the log took it (see `takenInTime`). */
function refusedReason(command: SendCommand, takenAt: number): string {
  return `refused: the log took this send at ${new Date(takenAt).toISOString()}, after the API gave up at ${new Date(command.expires_at!).toISOString()} and answered 503; never executed`;
}
