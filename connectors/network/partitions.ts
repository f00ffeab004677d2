import type { Logger } from 'pino';
import type { ConsumedRecord, PartitionOwner } from '../../topics/index.js';

/** What the partition state needs of the consumer-group member. */
export type PartitionControl = Pick<PartitionOwner, 'pause' | 'resume' | 'seek' | 'watermarks'>;

export interface PartitionsDeps {
  readonly control: PartitionControl;
  readonly statesTopic: string;
  /** The send topic and the connectors' command topics: paused together until the states are loaded. */
  readonly commandTopics: readonly string[];
  readonly logger: Logger;
  /** The states of a partition are loaded for the first time: open its sessions. */
  readonly opened: (partition: number) => Promise<void>;
  /** The partition moved away: close its sessions. */
  readonly released: (partition: number) => Promise<void>;
  /** How long commands wait for states that never come; 10 s unless a test says otherwise. */
  readonly loadTimeoutMs?: number;
}

interface OwnedPartition {
  /** Next offset of the state topic to apply. */
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

/**
 * How long commands wait for states that never come: compaction may have removed the last offsets
 * of an idle partition (a cleaned tombstone), and then the end offset is never read.
 */
const LOAD_TIMEOUT_MS = 10_000;

/**
 * The partitions this member owns and how far their number states are loaded. Commands of a
 * partition wait (paused) until its states are read up to the end offset seen when it came, so
 * that every send finds its number.
 */
export class OwnedPartitions {
  private readonly partitions = new Map<number, OwnedPartition>();

  constructor(private readonly deps: PartitionsDeps) {}

  owned(): number[] {
    return [...this.partitions.keys()].sort((a, b) => a - b);
  }

  has(p: number): boolean {
    return this.partitions.has(p);
  }

  /** Whether the sessions of a partition are open (its states were loaded once). */
  isOpened(p: number): boolean {
    return this.partitions.get(p)?.opened ?? false;
  }

  isLoaded(p: number): boolean {
    const partition = this.partitions.get(p);
    return partition !== undefined && isLoaded(partition);
  }

  /** Takes a new assignment: releases the partitions gone, starts loading the new ones. */
  async assign(partitions: readonly number[]): Promise<void> {
    const { control, statesTopic, commandTopics } = this.deps;
    for (const p of this.partitions.keys()) if (!partitions.includes(p)) await this.release(p);
    const fresh = partitions.filter((p) => !this.partitions.has(p));
    const marks = fresh.length > 0 ? await control.watermarks(statesTopic) : new Map<number, { low: number; high: number }>();
    for (const p of partitions) {
      const kept = this.partitions.get(p);
      if (kept) {
        // Kafka restarts an uncommitted topic from its first offset after a rebalance; skip what is applied.
        control.seek(statesTopic, p, kept.next);
        continue;
      }
      const mark = marks.get(p) ?? { low: 0, high: 0 };
      const partition: OwnedPartition = { next: mark.low, target: mark.high, opened: false, paused: false };
      this.partitions.set(p, partition);
      for (const topic of commandTopics) control.resume(topic, p);
      if (isLoaded(partition)) await this.onLoaded(p, partition);
    }
  }

  /**
   * Applies the state records of an owned partition in order, skipping those applied already;
   * once the states are loaded, opens the sessions and lets the commands go.
   */
  async applyStates<V>(p: number, records: readonly ConsumedRecord<V>[], apply: (record: ConsumedRecord<V>) => Promise<void>): Promise<void> {
    const partition = this.partitions.get(p);
    if (!partition) return;
    for (const record of records) {
      if (record.offset < partition.next) continue;
      await apply(record);
      partition.next = record.offset + 1;
    }
    if (isLoaded(partition)) await this.onLoaded(p, partition);
  }

  /**
   * A command for a number we do not know: its state may have been written just before it (the
   * API creates a number, then pairs it). If the state topic holds more than we applied, wait for it.
   */
  async statesMayBeBehind(p: number, record: ConsumedRecord<unknown>): Promise<boolean> {
    const partition = this.partitions.get(p);
    if (!partition) return false;
    const mark = `${record.topic}:${record.offset}`;
    if (partition.waitedFor === mark) return false;
    partition.waitedFor = mark;
    const high = (await this.deps.control.watermarks(this.deps.statesTopic)).get(p)?.high ?? 0;
    if (high <= partition.next) return false;
    partition.target = high;
    return true;
  }

  /** Pauses the commands of a partition until its states are loaded, or the load timeout gives up. */
  pauseCommands(p: number): void {
    const partition = this.partitions.get(p);
    if (!partition || partition.paused) return;
    partition.paused = true;
    for (const topic of this.deps.commandTopics) this.deps.control.pause(topic, p);
    partition.waitTimer = setTimeout(() => {
      if (this.partitions.get(p) !== partition || isLoaded(partition)) return;
      this.deps.logger.warn({ partition: p, at: partition.next, target: partition.target }, 'number states did not reach the end offset; going on');
      partition.target = partition.next;
      void this.onLoaded(p, partition);
    }, this.deps.loadTimeoutMs ?? LOAD_TIMEOUT_MS);
  }

  private async release(p: number): Promise<void> {
    clearTimeout(this.partitions.get(p)?.waitTimer);
    this.partitions.delete(p);
    await this.deps.released(p);
  }

  private async onLoaded(p: number, partition: OwnedPartition): Promise<void> {
    if (!partition.opened) {
      partition.opened = true;
      await this.deps.opened(p);
    }
    if (partition.paused) {
      partition.paused = false;
      clearTimeout(partition.waitTimer);
      for (const topic of this.deps.commandTopics) this.deps.control.resume(topic, p);
    }
  }
}

function isLoaded(partition: OwnedPartition): boolean {
  return partition.next >= partition.target;
}
