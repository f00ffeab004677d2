import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { StreamHub, type EventSink, type StreamRequest } from '../../api/streams/hub.js';
import type { LogReader } from '../../api/streams/log-range.js';
import type { StreamedEvent } from '../../api/streams/streamed-event.js';
import { asAccountId, asEventId, asProjectId } from '../../schemas/ids.js';
import type { PublicEvent } from '../../schemas/records.js';
import { partitionOf, topicName, topics, type ConsumedRecord } from '../../topics/index.js';
import { MemoryBatch, memoryRecord } from '../support/memory-topics.js';

const quiet = pino({ level: 'silent' });
const PARTITIONS = 4;
const PREFIX = 't.';
const TOPIC = topicName(topics.events, PREFIX);

const project = asProjectId('prj_x');
const P = partitionOf(project, PARTITIONS);
/** An account of the project whose events land in another partition, and a project of another account sharing P. */
const account = asAccountId(firstId('acc_x', (id) => partitionOf(id, PARTITIONS) !== P));
const A = partitionOf(account, PARTITIONS);
const otherProject = asProjectId(firstId('prj_o', (id) => partitionOf(id, PARTITIONS) === P));

function firstId(prefix: string, fits: (id: string) => boolean): string {
  for (let i = 0; ; i++) if (fits(`${prefix}${i}`)) return `${prefix}${i}`;
}

let serial = 0;
function event(scope: 'project' | 'account', overrides: Partial<PublicEvent> = {}): PublicEvent {
  return {
    event_id: asEventId(`evt_${++serial}`),
    occurred_at: Date.now(),
    account_id: account,
    project_id: scope === 'project' ? project : null,
    instance_id: null,
    event_type: scope === 'project' ? 'message.received' : 'advisory.published',
    scope,
    client_reference: null,
    group: null,
    sender: null,
    mentions: [],
    payload_json: '{}',
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
    ...overrides,
  };
}

/** `gw.events` in memory: what was appended, per partition, for the hub's reader and for catch-ups. */
class EventLog {
  readonly partitions: ConsumedRecord<PublicEvent>[][] = Array.from({ length: PARTITIONS }, () => []);

  /** Appends events to a partition and hands them to the hub as one fetched batch. */
  append(hub: StreamHub, partition: number, events: readonly PublicEvent[]): void {
    const log = this.partitions[partition]!;
    const records = events.map((value) => memoryRecord(TOPIC, partition, log.length + events.indexOf(value), value));
    log.push(...records);
    hub.take(new MemoryBatch(records, PREFIX));
  }

  end(partition: number): number {
    return this.partitions[partition]!.length;
  }
}

/** A catch-up reader over an `EventLog` that waits for `open()` before it reads; ranges asked are kept. */
function gatedReader(log: EventLog) {
  const ranges: { from: Map<number, number>; to: Map<number, number> }[] = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const read: LogReader = async (range, each, signal) => {
    ranges.push({ from: new Map(range.from), to: new Map(range.to) });
    await Promise.race([gate, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
    for (const [partition, from] of range.from) {
      if (signal.aborted) return;
      await each(partition, log.partitions[partition]!.filter((r) => r.offset >= from && r.offset < range.to.get(partition)!));
    }
  };
  return { read, ranges, open };
}

class RecordingSink implements EventSink {
  opened: string | undefined;
  readonly received: { partition: number; offset: number; id: string; cursor: string }[] = [];
  closed = false;

  open(cursor: string): void {
    this.opened = cursor;
  }

  send(entry: StreamedEvent, cursor: string): boolean {
    this.received.push({ partition: entry.partition, offset: entry.offset, id: entry.event.event_id, cursor });
    return true;
  }

  drained(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
  }

  offsets(partition: number): number[] {
    return this.received.filter((r) => r.partition === partition).map((r) => r.offset);
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const cursorOf = (positions: Record<number, number>) => new Map(Object.entries(positions).map(([p, o]) => [Number(p), o]));

describe('stream hub: live events, resumes from memory or from the log, slow clients', () => {
  const hubs: StreamHub[] = [];
  afterEach(async () => {
    for (const hub of hubs.splice(0)) await hub.stop();
  });

  function setUp(bufferPerPartition: number) {
    const log = new EventLog();
    const reader = gatedReader(log);
    const start = new Map(Array.from({ length: PARTITIONS }, (_, partition) => [partition, 0]));
    const hub = new StreamHub({ logger: quiet, readLog: reader.read }, start, { bufferPerPartition });
    hubs.push(hub);
    return { hub, log, reader };
  }

  function request(sink: EventSink, from?: Record<number, number>, accepts: StreamRequest['accepts'] = () => true): StreamRequest {
    return { projectId: project, accountId: account, accepts, from: from && cursorOf(from), sink };
  }

  it('sends a live client the events of its project and account it asked for, and nothing else', async () => {
    const { hub, log } = setUp(10);
    const sink = new RecordingSink();
    hub.subscribe(request(sink, undefined, (e) => e.event_type !== 'message.sent'));
    expect(sink.opened).toBe(`${Math.min(P, A)}-0.${Math.max(P, A)}-0`);
    const mine = event('project');
    log.append(hub, P, [
      mine,
      event('project', { project_id: otherProject, account_id: asAccountId('acc_other') }),
      event('project', { event_type: 'message.sent' }),
      event('project', { trigger: 'test' }),
    ]);
    const accountEvent = event('account');
    log.append(hub, A, [accountEvent]);
    expect(sink.received.map((r) => r.id)).toEqual([mine.event_id, accountEvent.event_id]);
    // The cursor of each event is the place right after it; the others' events were passed over.
    expect(sink.received[1]!.cursor).toBe(P < A ? `${P}-4.${A}-1` : `${A}-1.${P}-4`);
    expect(hub.stats()).toEqual({ subscribers: 1, logCatchUps: 0 });
  });

  it('serves a client resuming within what the hub holds from memory, then live', async () => {
    const { hub, log, reader } = setUp(5);
    log.append(hub, P, [event('project'), event('project'), event('project')]);
    const sink = new RecordingSink();
    hub.subscribe(request(sink, { [P]: 1, [A]: 0 }));
    expect(sink.opened).toBe(P < A ? `${P}-1.${A}-0` : `${A}-0.${P}-1`);
    await settle();
    expect(sink.offsets(P)).toEqual([1, 2]);
    log.append(hub, P, [event('project')]);
    expect(sink.offsets(P)).toEqual([1, 2, 3]);
    expect(reader.ranges).toEqual([]);
    expect(hub.stats().logCatchUps).toBe(0);
  });

  it('goes to the log exactly when a client resumes before the oldest event held', async () => {
    const { hub, log, reader } = setUp(2);
    log.append(hub, P, [1, 2, 3, 4, 5].map(() => event('project')));
    const atOldest = new RecordingSink();
    hub.subscribe(request(atOldest, { [P]: 3, [A]: 0 }));
    await settle();
    expect(atOldest.offsets(P)).toEqual([3, 4]);
    expect(reader.ranges).toEqual([]);
    hub.subscribe(request(new RecordingSink(), { [P]: 2, [A]: 0 }));
    await settle();
    expect(reader.ranges).toEqual([{ from: new Map([[P, 2]]), to: new Map([[P, 5]]) }]);
  });

  it('serves a client from further back from the log, holding live events until it caught up, each once and in order', async () => {
    const { hub, log, reader } = setUp(2);
    log.append(hub, P, [1, 2, 3, 4, 5].map(() => event('project')));
    const sink = new RecordingSink();
    hub.subscribe(request(sink, { [P]: 0, [A]: 0 }));
    await settle();
    expect(reader.ranges).toEqual([{ from: new Map([[P, 0]]), to: new Map([[P, 5]]) }]);
    log.append(hub, P, [event('project')]);
    expect(sink.received).toEqual([]);

    reader.open();
    await settle();
    expect(sink.offsets(P)).toEqual([0, 1, 2, 3, 4, 5]);
    log.append(hub, P, [event('project')]);
    expect(sink.offsets(P)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(hub.stats().logCatchUps).toBe(1);
  });

  it('lets a client go once too many live events wait for its catch-up', async () => {
    const { hub, log } = setUp(1);
    log.append(hub, P, [event('project'), event('project')]);
    const sink = new RecordingSink();
    hub.subscribe(request(sink, { [P]: 0, [A]: 0 }));
    await settle();
    log.append(hub, P, Array.from({ length: 10_000 }, () => event('project')));
    expect(sink.closed).toBe(false);
    log.append(hub, P, [event('project')]);
    expect(sink.closed).toBe(true);
    expect(hub.stats().subscribers).toBe(0);
    await settle();
    expect(sink.received).toEqual([]);
  });

  it('releases a client that leaves, and every client when stopping', async () => {
    const { hub, log } = setUp(5);
    const leaving = new RecordingSink();
    const staying = new RecordingSink();
    const behind = new RecordingSink();
    hub.subscribe(request(leaving)).close();
    hub.subscribe(request(staying));
    log.append(hub, P, [event('project'), event('project')]);
    hub.subscribe(request(behind, { [P]: 0, [A]: 0 }));
    expect(hub.stats().subscribers).toBe(2);
    expect(leaving.received).toEqual([]);
    expect(staying.offsets(P)).toEqual([0, 1]);

    await hub.stop();
    expect([leaving.closed, staying.closed, behind.closed]).toEqual([true, true, true]);
    expect(hub.stats().subscribers).toBe(0);
    expect(hub.accepting).toBe(false);
    expect(() => hub.subscribe(request(new RecordingSink()))).toThrow(/stopping/);
  });
});
