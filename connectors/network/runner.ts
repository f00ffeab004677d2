import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { InstanceState, SandboxCommand, SendCommand } from '../../schemas/records.js';
import {
  sendToDeadLetters,
  takenInTime,
  topicName,
  untilSettled,
  topics,
  type ConsumedBatch,
  type ConsumedRecord,
  type Kafka,
  type Producer,
  type TopicSerdes,
} from '../../topics/index.js';
import type { NetworkConnector, NumberSession, SessionFact } from './connector.js';
import { createPartitionOwner, type PartitionOwner } from '../../topics/index.js';
import { ExecutedSends } from './executed.js';
import { groupRecord, inboundRecord, nextState, pairingRecord } from './fact-records.js';
import { newEventId } from './ids.js';
import type { SendMetrics } from './metrics.js';
import { Sends } from './sends.js';
import { KeyedSerial } from './serial.js';

/** Applies the controls of `gw.sandbox.commands` to the sandbox sessions of this worker. */
export interface SandboxControls {
  apply(command: SandboxCommand): Promise<void>;
}

export interface ConnectorRunnerDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly connectors: readonly NetworkConnector[];
  readonly controls: SandboxControls;
  readonly metrics: SendMetrics;
}

/** A number whose partition this worker owns. */
interface OwnedNumber {
  /** Its full current state: the last record read, then our own writes. */
  state: InstanceState;
  readonly partition: number;
  session?: NumberSession;
  /** Event ids of states we wrote and have not read back yet. */
  readonly pending: Set<string>;
}

interface OwnedPartition {
  /** Next offset of `gw.instances` to apply. */
  next: number;
  /** The states of the partition are loaded once `next` reaches this offset. */
  target: number;
  /** Sessions open after the first load; until then commands wait. */
  opened: boolean;
  /** Commands wait (paused) until the states are loaded, or until `waitTimer` gives up on it. */
  paused: boolean;
  waitTimer?: NodeJS.Timeout;
  /** The command record that last waited for fresher states: a record waits once. */
  waitedFor?: string;
}

const PURGE_EVERY_MS = 3_600_000;
/**
 * How long commands wait for states that never come: compaction may have removed the last offsets
 * of an idle partition (a cleaned tombstone), and then the end offset is never read.
 */
const LOAD_TIMEOUT_MS = 10_000;

/**
 * The connector role: one member of the `connector` group. It owns partition p of the state,
 * send and sandbox topics together (see `assigner.ts`), opens the sessions of the numbers in its
 * partitions, executes their sends once, and writes what the sessions observe to the log.
 */
export class ConnectorRunner {
  private readonly numbers = new Map<string, OwnedNumber>();
  private readonly partitions = new Map<number, OwnedPartition>();
  private readonly writer = new KeyedSerial();
  /** Partitions are consumed side by side; the batches of one partition number (states, commands) one at a time. */
  private readonly partitionWork = new KeyedSerial();
  private readonly executed: ExecutedSends;
  private readonly sends: Sends;
  private readonly connectors: ReadonlyMap<string, NetworkConnector>;
  private readonly statesTopic: string;
  private readonly sendTopic: string;
  private readonly commandTopics: readonly string[];
  private owner?: PartitionOwner;
  private purgeTimer?: NodeJS.Timeout;

  constructor(private readonly deps: ConnectorRunnerDeps) {
    this.executed = new ExecutedSends(deps.pool);
    this.sends = new Sends({ executed: this.executed, writer: this.writer, producer: deps.producer, logger: deps.logger, metrics: deps.metrics, numberOf: (id) => this.numbers.get(id) });
    this.connectors = new Map(deps.connectors.map((c) => [c.kind, c]));
    const prefix = deps.serdes.prefix;
    this.statesTopic = topicName(topics.instances, prefix);
    this.sendTopic = topicName(topics.sendCommands, prefix);
    this.commandTopics = [this.sendTopic, topicName(topics.sandboxCommands, prefix)];
  }

  async start(): Promise<void> {
    await this.executed.ensureSchema();
    const purge = () => void this.executed.purge().catch((err: unknown) => this.deps.logger.warn({ err }, 'purging executed sends failed'));
    purge();
    this.purgeTimer = setInterval(purge, PURGE_EVERY_MS).unref();
    this.owner = await createPartitionOwner(this.deps.kafka, this.deps.serdes, {
      groupId: `${this.deps.serdes.prefix}connector`,
      topics: [topics.instances, topics.sendCommands, topics.sandboxCommands],
      onAssignment: (partitions) => this.assign(partitions),
      logger: this.deps.logger,
    });
    await this.owner.run((batch) => this.onBatch(batch));
  }

  /** The partitions this member owns now. */
  ownedPartitions(): number[] {
    return [...this.partitions.keys()].sort((a, b) => a - b);
  }

  async stop(): Promise<void> {
    clearInterval(this.purgeTimer);
    await this.owner?.stop();
    await this.writer.drain();
  }

  private async assign(partitions: readonly number[]): Promise<void> {
    const owner = this.owner!;
    for (const p of this.partitions.keys()) if (!partitions.includes(p)) await this.release(p);
    const fresh = partitions.filter((p) => !this.partitions.has(p));
    const marks = fresh.length > 0 ? await owner.watermarks(this.statesTopic) : new Map<number, { low: number; high: number }>();
    for (const p of partitions) {
      const kept = this.partitions.get(p);
      if (kept) {
        // Kafka restarts an uncommitted topic from its first offset after a rebalance; skip what is applied.
        owner.seek(this.statesTopic, p, kept.next);
        continue;
      }
      const mark = marks.get(p) ?? { low: 0, high: 0 };
      const partition: OwnedPartition = { next: mark.low, target: mark.high, opened: false, paused: false };
      this.partitions.set(p, partition);
      for (const topic of this.commandTopics) owner.resume(topic, p);
      if (isLoaded(partition)) await this.onLoaded(p, partition);
    }
    this.deps.logger.info({ partitions }, 'connector partitions assigned');
  }

  private async release(p: number): Promise<void> {
    clearTimeout(this.partitions.get(p)?.waitTimer);
    this.partitions.delete(p);
    const leaving = [...this.numbers.values()].filter((n) => n.partition === p);
    await Promise.all(leaving.map((n) => this.drop(n, 'close')));
  }

  private onBatch(batch: ConsumedBatch): Promise<void> {
    return this.partitionWork.run(String(batch.partition), () => this.applyBatch(batch));
  }

  private async applyBatch(batch: ConsumedBatch): Promise<void> {
    const partition = this.partitions.get(batch.partition);
    if (!partition || batch.records.length === 0) return;
    if (batch.topic === this.statesTopic) await this.applyStates(batch, partition);
    else await this.applyCommands(batch, partition);
  }

  // --- Number states -----------------------------------------------------------------------------

  private async applyStates(batch: ConsumedBatch, partition: OwnedPartition): Promise<void> {
    for (const record of batch.records) {
      if (record.offset < partition.next) continue;
      await this.applyState(record);
      partition.next = record.offset + 1;
    }
    batch.resolve(batch.records[batch.records.length - 1]!.offset);
    if (isLoaded(partition)) await this.onLoaded(batch.partition, partition);
  }

  private async applyState(record: ConsumedRecord<unknown>): Promise<void> {
    if (!record.decoded.ok) {
      this.deps.logger.warn({ err: record.decoded.error, offset: record.offset }, 'undecodable number state skipped');
      return;
    }
    const state = record.decoded.value as InstanceState | null;
    const id = state?.instance_id ?? record.key;
    const current = id === null ? undefined : this.numbers.get(id);
    if (state === null || state.deleted) {
      if (current) await this.drop(current, 'logout');
      return;
    }
    if (current?.pending.delete(state.event_id)) return;
    if (!current) {
      const number: OwnedNumber = { state, partition: record.partition, pending: new Set() };
      this.numbers.set(state.instance_id, number);
      if (this.partitions.get(record.partition)?.opened) await this.openSession(number);
      return;
    }
    if (!current.session) {
      current.state = state;
      return;
    }
    // Written by someone else (the API: nickname, pools): the session still decides status and phone.
    const { status, phone, reason } = current.state;
    current.state = { ...state, status, phone, reason };
    if (state.status !== status || state.phone !== phone) {
      await this.writeState(current, { ...current.state, event_id: newEventId(), occurred_at: Date.now(), previous_status: null });
    }
  }

  private async onLoaded(p: number, partition: OwnedPartition): Promise<void> {
    if (!partition.opened) {
      partition.opened = true;
      const numbers = [...this.numbers.values()].filter((n) => n.partition === p);
      await Promise.all(numbers.map((n) => this.openSession(n)));
    }
    if (partition.paused) {
      partition.paused = false;
      clearTimeout(partition.waitTimer);
      for (const topic of this.commandTopics) this.owner!.resume(topic, p);
    }
  }

  private async openSession(number: OwnedNumber): Promise<void> {
    const { instance_id: id, connector: kind } = number.state;
    const connector = this.connectors.get(kind);
    if (!connector) {
      this.deps.logger.warn({ instanceId: id, connector: kind }, 'no connector of this kind runs here; the number stays closed');
      return;
    }
    try {
      const session = await connector.open(number.state, { emit: (fact) => this.onFact(number, fact) });
      if (this.numbers.get(id) === number) number.session = session;
      else await session.close();
    } catch (err) {
      this.deps.logger.error({ err, instanceId: id }, 'opening a session failed');
    }
  }

  private async drop(number: OwnedNumber, how: 'close' | 'logout'): Promise<void> {
    this.numbers.delete(number.state.instance_id);
    await number.session?.[how]().catch((err: unknown) => this.deps.logger.warn({ err, instanceId: number.state.instance_id }, `session ${how} failed`));
  }

  // --- Facts of sessions -------------------------------------------------------------------------

  /** Writes a fact of a session, in order with the other records of its number; facts of closed sessions are dropped. */
  private onFact(number: OwnedNumber, fact: SessionFact): Promise<void> {
    const id = number.state.instance_id;
    if (fact.kind === 'status') return this.sends.writeReceipt(id, fact, () => this.numbers.get(id) === number);
    return this.writer.run(id, async () => {
      if (this.numbers.get(id) !== number) return;
      const { producer } = this.deps;
      switch (fact.kind) {
        case 'state': {
          const next = nextState(number.state, fact, Date.now());
          if (next) await this.writeStateNow(number, next);
          return;
        }
        case 'pairing':
          await producer.send(topics.pairing, [{ key: id, value: pairingRecord(number.state, fact, Date.now()) }]);
          return;
        case 'inbound':
          await producer.send(topics.inboundMessages, [{ key: id, value: inboundRecord(number.state, fact.message) }]);
          return;
        case 'group':
          await producer.send(topics.groups, [{ key: id, value: groupRecord(number.state, fact.event) }]);
          return;
      }
    });
  }

  private writeState(number: OwnedNumber, state: InstanceState): Promise<void> {
    return this.writer.run(state.instance_id, async () => {
      if (this.numbers.get(state.instance_id) === number) await this.writeStateNow(number, state);
    });
  }

  private async writeStateNow(number: OwnedNumber, state: InstanceState): Promise<void> {
    number.state = state;
    number.pending.add(state.event_id);
    await this.deps.producer.send(topics.instances, [{ key: state.instance_id, value: state }]);
  }

  // --- Commands ----------------------------------------------------------------------------------

  private async applyCommands(batch: ConsumedBatch, partition: OwnedPartition): Promise<void> {
    if (!isLoaded(partition)) {
      this.pauseCommands(batch.partition, partition);
      return;
    }
    let next: number | undefined;
    const applied = async (offset: number) => {
      batch.resolve(offset);
      next = offset + 1;
      await batch.heartbeat();
    };
    // Consecutive sends are executed together; any other record first executes those before it.
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
      for (const record of batch.records) {
        if (!batch.isRunning()) break;
        if (!record.decoded.ok || record.decoded.value === null) {
          if (!(await flush())) break;
          await this.deadLetter(record, record.decoded.ok ? 'empty command' : record.decoded.error.message);
        } else {
          const command = record.decoded.value as SendCommand | SandboxCommand;
          if (!this.numbers.has(command.instance_id) && (await this.statesMayBeBehind(batch.partition, partition, record))) {
            if (await flush()) this.pauseCommands(batch.partition, partition);
            break;
          }
          if (batch.topic === this.sendTopic && !takenInTime(command as SendCommand, record.timestamp)) {
            if (!(await flush())) break;
            await this.deadLetter(record, refusedReason(command as SendCommand, record.timestamp));
          } else if (batch.topic === this.sendTopic) {
            sends.push({ command: command as SendCommand, record });
            continue;
          } else {
            if (!(await flush())) break;
            await this.control(command as SandboxCommand);
          }
        }
        await applied(record.offset);
      }
      if (batch.isRunning()) await flush();
    } finally {
      // Also when a heartbeat says the group rebalances: the next owner starts after what was done.
      if (next !== undefined) {
        await this.owner!.commit(batch.topic, batch.partition, next).catch((err: unknown) => this.deps.logger.warn({ err }, 'command offset commit failed'));
      }
    }
  }

  /**
   * A command for a number we do not know: its state may have been written just before it (the
   * API creates a number, then pairs it). If the state topic holds more than we applied, wait for it.
   */
  private async statesMayBeBehind(p: number, partition: OwnedPartition, record: ConsumedRecord<unknown>): Promise<boolean> {
    const mark = `${record.topic}:${record.offset}`;
    if (partition.waitedFor === mark) return false;
    partition.waitedFor = mark;
    const high = (await this.owner!.watermarks(this.statesTopic)).get(p)?.high ?? 0;
    if (high <= partition.next) return false;
    partition.target = high;
    return true;
  }

  private pauseCommands(p: number, partition: OwnedPartition): void {
    if (partition.paused) return;
    partition.paused = true;
    for (const topic of this.commandTopics) this.owner!.pause(topic, p);
    partition.waitTimer = setTimeout(() => {
      if (this.partitions.get(p) !== partition || isLoaded(partition)) return;
      this.deps.logger.warn({ partition: p, at: partition.next, target: partition.target }, 'number states did not reach the end offset; going on');
      partition.target = partition.next;
      void this.onLoaded(p, partition);
    }, LOAD_TIMEOUT_MS);
  }

  /**
   * Executes sends together, retrying transient failures; when they fail for good (a command
   * Postgres cannot store, a bug), each is executed alone so that only the one at fault is
   * dead-lettered. False when the batch stopped first.
   */
  private async execute(batch: ConsumedBatch, sends: readonly PendingSend[]): Promise<boolean> {
    const settled = await untilSettled(() => this.sends.send(sends.map((s) => s.command)), {
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

  private async control(command: SandboxCommand): Promise<void> {
    try {
      await this.deps.controls.apply(command);
    } catch (err) {
      this.deps.logger.warn({ err, instanceId: command.instance_id, control: command.control.kind }, 'sandbox control failed');
    }
  }

  private async deadLetter(record: ConsumedRecord<unknown>, reason: string): Promise<void> {
    this.deps.logger.error({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'command dead-lettered');
    await sendToDeadLetters(this.deps.producer, this.deps.serdes.prefix, record, { 'x-dead-consumer': 'connector' }, reason);
  }
}

/** Why a send is not executed: the API answered 503 before the log took it (see `takenInTime`). */
function refusedReason(command: SendCommand, takenAt: number): string {
  return `refused: the log took this send at ${new Date(takenAt).toISOString()}, after the API gave up at ${new Date(command.expires_at!).toISOString()} and answered 503; never executed`;
}

interface PendingSend {
  readonly command: SendCommand;
  readonly record: ConsumedRecord<unknown>;
}

function isLoaded(partition: OwnedPartition): boolean {
  return partition.next >= partition.target;
}
