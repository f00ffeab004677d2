import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { isStreamOnly, isWebhookEventType } from '../../events/catalogue.js';
import type { PublicEvent } from '../../schemas/records.js';
import {
  partitionOf,
  readFromPositions,
  recordsOf,
  topicName,
  topics,
  watermarks,
  type ConsumedBatch,
  type Kafka,
  type PositionedReader,
  type TopicSerdes,
} from '../../topics/index.js';
import { formatCursor, type Cursor } from './cursor.js';
import { readLogRange, type LogReader } from './log-range.js';
import { RecentEvents } from './recent-events.js';
import { Slots } from './slots.js';
import { StreamedEvent } from './streamed-event.js';

/** Where a subscriber's events go: the SSE response of one client. */
export interface EventSink {
  /** The stream starts at `cursor`, before any event. */
  open(cursor: string): void;
  /** One event and the cursor after it; false asks a catch-up to wait for `drained` before sending more. */
  send(entry: StreamedEvent, cursor: string): boolean;
  /** Resolves once the client has read what was sent (or is gone). */
  drained(): Promise<void>;
  /** Ends the stream from the server's side; the client resumes from its last id. */
  close(): void;
}

export interface StreamRequest {
  readonly projectId: string;
  readonly accountId: string;
  /** Which of the project's and account's events this client receives. */
  readonly accepts: (event: PublicEvent) => boolean;
  /** Resume right after this cursor; absent: from now on. */
  readonly from: Cursor | undefined;
  readonly sink: EventSink;
}

export interface Subscription {
  /** Where the client stands: every event before it was sent, or is not the client's. */
  cursor(): string;
  close(): void;
}

export interface StreamHubDeps {
  readonly logger: Logger;
  /** Where catch-ups from further back than the hub holds read the log. */
  readonly readLog: LogReader;
}

export interface StreamHubOptions {
  /** Streamable events held per partition for clients that resume. */
  readonly bufferPerPartition: number;
}

/** Live events held for one client while it catches up; past this it is too far behind and is let go. */
const MAX_HELD = 10_000;
/** Catch-ups reading from the log at once, per process (each is a consumer group of its own). */
const LOG_CATCH_UPS_AT_ONCE = 4;
/** How long a new hub waits to have read the last records before it serves, at most. */
const FILL_TIMEOUT_MS = 15_000;

/** Events any stream carries: the public catalogue, real or triggered by hand (test events are for one webhook). */
function streamable(event: PublicEvent): boolean {
  return event.trigger !== 'test' && (isWebhookEventType(event.event_type) || isStreamOnly(event.event_type));
}

/** Whose streams an event goes to: its project's, or for an account event, every stream of the account. */
function audienceOf(event: PublicEvent): string | null {
  if (event.scope === 'account') return event.account_id;
  return event.scope === 'project' ? event.project_id : null;
}

/**
 * The streams of one API process. A single reader follows `gw.events` (a consumer group of this
 * process alone, nothing committed, deleted on stop) and keeps the last events of each partition
 * in memory; each subscriber gets the events of its project and account as they arrive. A
 * project's events share one partition (the topic is keyed by project id) and its account's
 * events one more, so a client's place in the log is two offsets: its cursor.
 *
 * A client resuming within what the hub holds is served from memory; one from further back is
 * served from the log by a catch-up reader, while its live events wait. At start the hub reads the
 * last `bufferPerPartition` records of each partition, so clients reconnecting to a restarted
 * process are served from memory too.
 */
export class StreamHub {
  private readonly positions: number[];
  private readonly recent: RecentEvents[];
  private readonly byAudience = new Map<string, Set<Subscriber>>();
  private readonly subscribers = new Set<Subscriber>();
  private readonly catchUps = new Set<Promise<void>>();
  private readonly logSlots = new Slots(LOG_CATCH_UPS_AT_ONCE);
  private reader: PositionedReader | undefined;
  private stopping = false;
  private logCatchUps = 0;

  /** A hub whose reader starts at `start` (the next offset of each partition) and hands it batches through `take`. */
  constructor(
    private readonly deps: StreamHubDeps,
    start: ReadonlyMap<number, number>,
    options: StreamHubOptions,
  ) {
    this.positions = Array.from({ length: start.size }, (_, partition) => start.get(partition) ?? 0);
    this.recent = this.positions.map((offset) => new RecentEvents(options.bufferPerPartition, offset));
  }

  static async start(deps: { kafka: Kafka; serdes: TopicSerdes; logger: Logger }, options: StreamHubOptions): Promise<StreamHub> {
    const topic = topicName(topics.events, deps.serdes.prefix);
    const held = await watermarks(deps.kafka, topic);
    const start = new Map([...held].map(([partition, { low, high }]) => [partition, Math.max(low, high - options.bufferPerPartition)]));
    const readLog: LogReader = (range, each, signal) => readLogRange(deps, range, each, signal);
    const hub = new StreamHub({ logger: deps.logger, readLog }, start, options);
    const filled = () => [...held].every(([partition, { high }]) => hub.positions[partition]! >= high);
    let wake = () => {};
    const ready = new Promise<void>((resolve) => (wake = resolve));
    hub.reader = await readFromPositions(
      deps.kafka,
      deps.serdes,
      { groupId: `${deps.serdes.prefix}streams.${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`, topic: topics.events, from: start },
      (batch) => {
        hub.take(batch);
        if (filled()) wake();
      },
    );
    if (!filled()) {
      const timer = setTimeout(wake, FILL_TIMEOUT_MS);
      await ready;
      clearTimeout(timer);
      if (!filled()) deps.logger.warn('streams: the last events were not all read at start; following the log');
    }
    return hub;
  }

  /** The partitions of `gw.events` a stream of this project reads: its own, and its account's. */
  partitionsOf(projectId: string, accountId: string): number[] {
    const count = this.positions.length;
    return [...new Set([partitionOf(projectId, count), partitionOf(accountId, count)])].sort((a, b) => a - b);
  }

  get accepting(): boolean {
    return !this.stopping;
  }

  /** The newest event held in memory, on any partition, that `matches`. */
  findRecent(matches: (event: PublicEvent) => boolean): PublicEvent | undefined {
    let newest: PublicEvent | undefined;
    for (const held of this.recent) {
      const found = held.findLast((entry) => matches(entry.event))?.event;
      if (found !== undefined && (newest === undefined || found.occurred_at > newest.occurred_at)) newest = found;
    }
    return newest;
  }

  /** Clients connected now, and catch-ups that had to read the log since start. */
  stats(): { subscribers: number; logCatchUps: number } {
    return { subscribers: this.subscribers.size, logCatchUps: this.logCatchUps };
  }

  /** Opens the sink at the request's starting cursor, then sends what it missed and, from then on, what arrives. */
  subscribe(request: StreamRequest): Subscription {
    if (this.stopping) throw new Error('the stream hub is stopping');
    const subscriber = new Subscriber(this, request, this.partitionsOf(request.projectId, request.accountId));
    this.subscribers.add(subscriber);
    for (const audience of [request.projectId, request.accountId]) {
      const set = this.byAudience.get(audience) ?? new Set<Subscriber>();
      set.add(subscriber);
      this.byAudience.set(audience, set);
    }
    const fromMemory = new Map<number, StreamedEvent[]>();
    const fromLog = new Map<number, number>();
    for (const partition of subscriber.partitions) {
      const start = subscriber.position(partition);
      if (start < this.recent[partition]!.floor) {
        fromLog.set(partition, start);
      } else {
        const missed = this.recent[partition]!.from(start).filter((entry) => subscriber.wants(entry.event));
        if (missed.length > 0) fromMemory.set(partition, missed);
      }
    }
    const targets = new Map([...fromMemory.keys(), ...fromLog.keys()].map((partition) => [partition, this.positions[partition]!]));
    for (const partition of targets.keys()) subscriber.hold(partition);
    // Opened once the partitions that catch up are held: their place is the client's, not the hub's.
    request.sink.open(subscriber.cursor());
    if (targets.size > 0) {
      const done = this.catchUp(subscriber, fromMemory, fromLog, targets)
        .catch((err: unknown) => {
          if (!subscriber.closed) this.deps.logger.warn({ err }, 'streams: a catch-up failed; the client resumes later');
          subscriber.close();
        })
        .finally(() => this.catchUps.delete(done));
      this.catchUps.add(done);
    }
    return subscriber;
  }

  /** Where the hub stands in a partition: the next offset it will read. */
  position(partition: number): number {
    return this.positions[partition] ?? 0;
  }

  remove(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    for (const audience of [subscriber.request.projectId, subscriber.request.accountId]) {
      const set = this.byAudience.get(audience);
      set?.delete(subscriber);
      if (set?.size === 0) this.byAudience.delete(audience);
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const subscriber of [...this.subscribers]) subscriber.close();
    await Promise.allSettled([...this.catchUps]);
    await this.reader?.stop();
  }

  /** A batch of `gw.events` from the hub's reader: held for resumes and offered to subscribers. */
  take(batch: ConsumedBatch): void {
    const { partition } = batch;
    for (const record of recordsOf(batch, topics.events)) {
      this.positions[partition] = Math.max(this.positions[partition]!, record.offset + 1);
      if (!record.decoded.ok) {
        this.deps.logger.error({ err: record.decoded.error, partition, offset: record.offset }, 'streams: undecodable event skipped');
        continue;
      }
      const event = record.decoded.value;
      const audience = event === null || !streamable(event) ? null : audienceOf(event);
      if (event === null || audience === null) continue;
      const entry = new StreamedEvent(partition, record.offset, event);
      this.recent[partition]!.push(entry);
      for (const subscriber of this.byAudience.get(audience) ?? []) subscriber.offer(entry);
    }
  }

  private async catchUp(
    subscriber: Subscriber,
    fromMemory: ReadonlyMap<number, readonly StreamedEvent[]>,
    fromLog: ReadonlyMap<number, number>,
    targets: ReadonlyMap<number, number>,
  ): Promise<void> {
    for (const [partition, missed] of fromMemory) {
      for (const entry of missed) await subscriber.send(entry);
      await subscriber.release(partition, targets.get(partition)!);
    }
    if (fromLog.size === 0) return;
    const release = await this.logSlots.take(subscriber.signal);
    try {
      this.logCatchUps++;
      await this.deps.readLog(
        { from: fromLog, to: targets },
        async (partition, records) => {
          for (const record of records) {
            const event = record.decoded.ok ? record.decoded.value : null;
            if (event !== null && streamable(event)) await subscriber.send(new StreamedEvent(partition, record.offset, event));
            else subscriber.pass(partition, record.offset + 1);
          }
        },
        subscriber.signal,
      );
    } finally {
      release();
    }
    for (const partition of fromLog.keys()) await subscriber.release(partition, targets.get(partition)!);
  }
}

/** One client: where it stands in each partition it reads, and the live events held while it catches up. */
class Subscriber implements Subscription {
  private readonly own = new Map<number, number>();
  private readonly held = new Map<number, StreamedEvent[]>();
  private readonly aborter = new AbortController();

  constructor(
    private readonly hub: StreamHub,
    readonly request: StreamRequest,
    readonly partitions: readonly number[],
  ) {
    for (const partition of partitions) own(this.own, partition, request.from?.get(partition) ?? hub.position(partition));
  }

  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  get closed(): boolean {
    return this.aborter.signal.aborted;
  }

  /** The next offset this client needs in a partition. */
  position(partition: number): number {
    return this.own.get(partition)!;
  }

  cursor(): string {
    const cursor = new Map<number, number>();
    for (const [partition, offset] of this.own) {
      // A partition that is live has been offered everything the hub has read.
      cursor.set(partition, this.held.has(partition) ? offset : Math.max(offset, this.hub.position(partition)));
    }
    return formatCursor(cursor);
  }

  /** Whether an event is this client's: its project's, or its account's, and of the kinds it asked for. */
  wants(event: PublicEvent): boolean {
    const { projectId, accountId, accepts } = this.request;
    const mine = event.scope === 'account' ? event.account_id === accountId : event.scope === 'project' && event.project_id === projectId;
    return mine && streamable(event) && accepts(event);
  }

  /** A live event from the hub: sent now, or held while the partition catches up. */
  offer(entry: StreamedEvent): void {
    if (this.closed || !this.own.has(entry.partition)) return;
    const held = this.held.get(entry.partition);
    if (held === undefined) {
      this.deliver(entry);
    } else if (held.length >= MAX_HELD) {
      this.close();
    } else {
      held.push(entry);
    }
  }

  /** Marks a partition as catching up: its live events wait. */
  hold(partition: number): void {
    this.held.set(partition, []);
  }

  /** A caught-up event: sent unless already past, pacing on the client. */
  async send(entry: StreamedEvent): Promise<void> {
    if (!this.deliver(entry) && !this.closed) await this.request.sink.drained();
  }

  /** A record that is nobody's stream event: the client's place still moves past it. */
  pass(partition: number, next: number): void {
    own(this.own, partition, next);
  }

  /** The partition caught up to `target`: the live events held meanwhile go out, then it is live. */
  async release(partition: number, target: number): Promise<void> {
    own(this.own, partition, target);
    const held = this.held.get(partition) ?? [];
    while (held.length > 0 && !this.closed) await this.send(held.shift()!);
    this.held.delete(partition);
  }

  close(): void {
    if (this.closed) return;
    this.aborter.abort();
    this.hub.remove(this);
    this.request.sink.close();
  }

  /** Sends an event this client has not had yet; false when the client should be given time to read. */
  private deliver(entry: StreamedEvent): boolean {
    if (this.closed || entry.offset < this.position(entry.partition)) return true;
    own(this.own, entry.partition, entry.offset + 1);
    if (!this.wants(entry.event)) return true;
    return this.request.sink.send(entry, this.cursor());
  }
}

/** Moves a position forward only. */
function own(positions: Map<number, number>, partition: number, next: number): void {
  positions.set(partition, Math.max(positions.get(partition) ?? next, next));
}
