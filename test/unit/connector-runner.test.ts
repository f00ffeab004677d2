import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CommandBatches, type CommandBatchesDeps } from '../../connectors/network/commands.js';
import type { Addressed, ConnectorCommands, NetworkConnector, NumberSession, SessionEvents } from '../../connectors/network/connector.js';
import { OwnedPartitions, type PartitionControl } from '../../connectors/network/partitions.js';
import { KeyedSerial } from '../../shared/serial.js';
import { OwnedSessions } from '../../connectors/network/sessions.js';
import type { InstanceState, SendCommand } from '../../schemas/records.js';
import { asEventId } from '../../schemas/ids.js';
import { SerdeError } from '../../schemas/serde.js';
import { GatewayFailure, type ConsumedBatch, type ConsumedRecord, type Producer, type TopicSpec } from '../../topics/index.js';

const quiet = pino({ level: 'silent' });
const STATES = 'gw.instances';
const SENDS = 'gw.commands.send';
const CONTROLS = 'gw.sandbox.commands';

// --- In-memory stand-ins for the log -------------------------------------------------------------

function record<V>(topic: string, offset: number, value: V | null, options: { partition?: number; timestamp?: number; key?: string } = {}): ConsumedRecord<V> {
  return {
    topic,
    partition: options.partition ?? 0,
    offset,
    key: options.key ?? null,
    timestamp: options.timestamp ?? 1_000,
    headers: {},
    raw: Buffer.from(JSON.stringify(value)),
    decoded: { ok: true, value },
  };
}

function poison(topic: string, offset: number): ConsumedRecord<never> {
  return { ...record(topic, offset, null), raw: Buffer.from('garbage'), decoded: { ok: false, error: new SerdeError('unknown magic byte') } };
}

/** A batch as `topics/consumer.ts` hands it over, recording what the runner resolves. */
function memoryBatch(topic: string, records: readonly ConsumedRecord<unknown>[], partition = 0) {
  const resolved: number[] = [];
  const batch: ConsumedBatch = {
    topic,
    prefix: '',
    partition,
    highWatermark: (records[records.length - 1]?.offset ?? -1) + 1,
    firstOffset: records[0]?.offset ?? 0,
    records,
    heartbeat: async () => undefined,
    resolve: (offset) => void resolved.push(offset),
    isRunning: () => true,
    pause: () => () => undefined,
  };
  return { batch, resolved };
}

interface Sent {
  readonly topic: string;
  readonly key: string | null;
  readonly value: unknown;
  readonly headers?: Record<string, string>;
}

function memoryProducer() {
  const sent: Sent[] = [];
  const producer: Producer = {
    async send(spec, records) {
      for (const r of records) sent.push({ topic: spec.name, key: r.key, value: r.value });
      return new Map();
    },
    async sendRaw(topic, records) {
      for (const r of records) sent.push({ topic, key: r.key, value: r.value, headers: r.headers });
    },
    disconnect: async () => undefined,
  };
  return { producer, sent };
}

function memoryControl(marks: Record<number, { low: number; high: number }>) {
  const calls: string[] = [];
  const control: PartitionControl = {
    pause: (topic, p) => void calls.push(`pause ${topic} ${p}`),
    resume: (topic, p) => void calls.push(`resume ${topic} ${p}`),
    seek: (topic, p, offset) => void calls.push(`seek ${topic} ${p} ${offset}`),
    watermarks: async () => new Map(Object.entries(marks).map(([p, mark]) => [Number(p), { ...mark }])),
  };
  return { control, calls, marks };
}

async function waitFor(check: () => boolean, ms = 1_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// --- Partition state ---------------------------------------------------------------------------

describe('owned partitions', () => {
  function partitions(marks: Record<number, { low: number; high: number }>, loadTimeoutMs?: number) {
    const log = memoryControl(marks);
    const events: string[] = [];
    const owned = new OwnedPartitions({
      control: log.control,
      statesTopic: STATES,
      commandTopics: [SENDS, CONTROLS],
      logger: quiet,
      opened: async (p) => void events.push(`opened ${p}`),
      released: async (p) => void events.push(`released ${p}`),
      loadTimeoutMs,
    });
    return { owned, events, ...log };
  }

  it('opens an empty partition at once and a loaded one once its states reach the end offset', async () => {
    const { owned, events, calls } = partitions({ 0: { low: 0, high: 0 }, 1: { low: 2, high: 5 } });
    await owned.assign([0, 1]);
    expect(owned.owned()).toEqual([0, 1]);
    expect(events).toEqual(['opened 0']);
    expect(calls).toEqual([`resume ${SENDS} 0`, `resume ${CONTROLS} 0`, `resume ${SENDS} 1`, `resume ${CONTROLS} 1`]);
    expect(owned.isLoaded(1)).toBe(false);

    owned.pauseCommands(1);
    owned.pauseCommands(1);
    expect(calls.slice(4)).toEqual([`pause ${SENDS} 1`, `pause ${CONTROLS} 1`]);

    const applied: number[] = [];
    const states = [0, 1, 2, 3].map((offset) => record(STATES, offset, null, { partition: 1 }));
    await owned.applyStates(1, states, async (r) => void applied.push(r.offset));
    expect(applied).toEqual([2, 3]);
    expect(owned.isOpened(1)).toBe(false);
    await owned.applyStates(1, [record(STATES, 4, null, { partition: 1 })], async (r) => void applied.push(r.offset));
    expect(applied).toEqual([2, 3, 4]);
    expect(events).toEqual(['opened 0', 'opened 1']);
    expect(owned.isLoaded(1)).toBe(true);
    expect(calls.slice(6)).toEqual([`resume ${SENDS} 1`, `resume ${CONTROLS} 1`]);
  });

  it('releases the partitions that move away and seeks the kept ones past what they applied', async () => {
    const { owned, events, calls } = partitions({ 0: { low: 0, high: 0 }, 1: { low: 0, high: 2 } });
    await owned.assign([0, 1]);
    await owned.applyStates(1, [record(STATES, 0, null), record(STATES, 1, null)], async () => undefined);
    calls.length = 0;
    await owned.assign([1]);
    expect(events).toEqual(['opened 0', 'opened 1', 'released 0']);
    expect(calls).toEqual([`seek ${STATES} 1 2`]);
    expect(owned.owned()).toEqual([1]);
  });

  it('lets paused commands go when the states never reach the end offset', async () => {
    const { owned, events, calls } = partitions({ 0: { low: 0, high: 3 } }, 20);
    await owned.assign([0]);
    owned.pauseCommands(0);
    await waitFor(() => events.includes('opened 0'));
    expect(owned.isLoaded(0)).toBe(true);
    expect(calls.slice(-2)).toEqual([`resume ${SENDS} 0`, `resume ${CONTROLS} 0`]);
  });

  it('makes a command for an unknown number wait once for states written after the load', async () => {
    const { owned, marks } = partitions({ 0: { low: 0, high: 0 } });
    await owned.assign([0]);
    const command = record(SENDS, 7, { instance_id: 'i1' });
    expect(await owned.statesMayBeBehind(0, command)).toBe(false);
    marks[0] = { low: 0, high: 1 };
    expect(await owned.statesMayBeBehind(0, record(SENDS, 8, { instance_id: 'i1' }))).toBe(true);
    expect(owned.isLoaded(0)).toBe(false);
    expect(await owned.statesMayBeBehind(0, record(SENDS, 8, { instance_id: 'i1' }))).toBe(false);
  });
});

// --- Sessions of owned numbers -----------------------------------------------------------------

describe('owned sessions', () => {
  const state = (overrides: Partial<InstanceState> = {}): InstanceState =>
    ({ instance_id: 'i1', connector: 'sandbox', status: 'disconnected', phone: null, reason: null, event_id: 'e0', deleted: false, ...overrides }) as InstanceState;

  function sessions(opened: ReadonlySet<number>) {
    const { producer, sent } = memoryProducer();
    const lifecycle: string[] = [];
    let events: SessionEvents | undefined;
    const connector: NetworkConnector = {
      kind: 'sandbox',
      async open(instance, e) {
        events = e;
        lifecycle.push(`open ${instance.instance_id} ${instance.status}`);
        const session: Pick<NumberSession, 'close' | 'logout'> = {
          close: async () => void lifecycle.push(`close ${instance.instance_id}`),
          logout: async () => void lifecycle.push(`logout ${instance.instance_id}`),
        };
        return session as NumberSession;
      },
    };
    const owned = new OwnedSessions({
      connectors: [connector],
      producer,
      writer: new KeyedSerial(),
      logger: quiet,
      isOpened: (p) => opened.has(p),
      writeReceipt: async () => undefined,
    });
    return { owned, sent, lifecycle, emit: () => events! };
  }

  it('opens sessions only once their partition is loaded, and closes or logs them out', async () => {
    const opened = new Set<number>();
    const { owned, lifecycle } = sessions(opened);
    await owned.applyState(record(STATES, 0, state()));
    expect(lifecycle).toEqual([]);
    expect(owned.numberOf('i1')?.state.status).toBe('disconnected');
    opened.add(0);
    await owned.openPartition(0);
    expect(lifecycle).toEqual(['open i1 disconnected']);
    await owned.applyState(record(STATES, 1, state({ instance_id: 'i2' as InstanceState['instance_id'] })));
    expect(lifecycle).toEqual(['open i1 disconnected', 'open i2 disconnected']);
    await owned.closePartition(0);
    expect(lifecycle.slice(2).sort()).toEqual(['close i1', 'close i2']);
    expect(owned.numberOf('i1')).toBeUndefined();
    await owned.applyState(record(STATES, 2, state()));
    await owned.openPartition(0);
    await owned.applyState(record<InstanceState>(STATES, 3, null, { key: 'i1' }));
    expect(lifecycle.at(-1)).toBe('logout i1');
  });

  it('writes what a session observes and keeps its status over a state written by someone else', async () => {
    const { owned, sent, emit } = sessions(new Set([0]));
    await owned.applyState(record(STATES, 0, state()));
    await emit().emit({ kind: 'state', status: 'connected', reason: null, phone: '+5511999998888' });
    const written = sent.at(-1)!.value as InstanceState;
    expect(written).toMatchObject({ status: 'connected', phone: '+5511999998888' });
    // Our own write read back changes nothing.
    await owned.applyState(record(STATES, 1, written));
    expect(sent).toHaveLength(1);
    // The API renames the number from a state that predates the connection: the session's status stands.
    await owned.applyState(record(STATES, 2, { ...state(), event_id: asEventId('e-api'), nickname: 'shop' }));
    await owned.drain();
    expect(sent).toHaveLength(2);
    expect(sent[1]!.value).toMatchObject({ status: 'connected', phone: '+5511999998888', nickname: 'shop' });
  });
});

// --- Command batches ---------------------------------------------------------------------------

/** A command of a connector's own topic, as the tests write them. */
interface Control extends Addressed {
  readonly control: { readonly kind: string };
}

describe('command batches', () => {
  const send = (id: string, expires_at: number | null = null) => ({ instance_id: 'i1', message_id: id, expires_at });
  const control = (kind: string): Control => ({ instance_id: 'i1', control: { kind } });
  const controlTopic: TopicSpec<Control> = { name: CONTROLS, key: 'instance id', schema: 'test.Control', partitions: 12, cleanup: 'delete' };
  const controls = (apply: (command: Control) => Promise<void>): ConnectorCommands[] => [{ topic: controlTopic, apply }];

  function batches(overrides: Partial<CommandBatchesDeps> = {}) {
    const { producer, sent } = memoryProducer();
    const calls: string[] = [];
    const commits: string[] = [];
    const deps: CommandBatchesDeps = {
      controls: controls(async (c) => void calls.push(`control ${c.control.kind}`)),
      execute: async (sends: readonly SendCommand[]) => void calls.push(`send ${sends.map((s) => s.message_id).join(',')}`),
      knows: () => true,
      isLoaded: () => true,
      statesMayBeBehind: async () => false,
      pause: (p) => void calls.push(`pause ${p}`),
      commit: async (topic, p, next) => void commits.push(`${topic} ${p} ${next}`),
      producer,
      prefix: '',
      logger: quiet,
      ...overrides,
    };
    const sendRaw = producer.sendRaw.bind(producer);
    producer.sendRaw = async (topic, records) => {
      for (const r of records) calls.push(`dead ${r.headers?.['x-dead-offset']}`);
      await sendRaw(topic, records);
    };
    return { commands: new CommandBatches(deps), calls, commits, dead: () => sent.filter((s) => s.topic === 'gw.processors.dead') };
  }

  it('executes consecutive sends together, and the commands of a connector topic one by one in order', async () => {
    const { commands, calls, commits } = batches();
    const { batch, resolved } = memoryBatch(SENDS, [record(SENDS, 0, send('a')), record(SENDS, 1, send('b')), record(SENDS, 2, send('c'))]);
    await commands.apply(batch);
    expect(calls).toEqual(['send a,b,c']);
    expect(resolved).toEqual([2]);
    expect(commits).toEqual([`${SENDS} 0 3`]);

    const mixed = memoryBatch(CONTROLS, [record(CONTROLS, 0, control('scan')), record(CONTROLS, 1, control('customer_message'))]);
    await commands.apply(mixed.batch);
    expect(calls).toEqual(['send a,b,c', 'control scan', 'control customer_message']);
    expect(commits).toEqual([`${SENDS} 0 3`, `${CONTROLS} 0 2`]);
  });

  it('flushes the sends gathered before a refused (late) send and dead-letters it without executing it', async () => {
    const { commands, calls, commits, dead } = batches();
    const records = [
      record(SENDS, 10, send('a', 2_000), { timestamp: 1_000 }),
      record(SENDS, 11, send('late', 500), { timestamp: 1_000 }),
      record(SENDS, 12, send('b'), { timestamp: 1_000 }),
    ];
    const { batch, resolved } = memoryBatch(SENDS, records);
    await commands.apply(batch);
    expect(calls).toEqual(['send a', 'dead 11', 'send b']);
    expect(dead()).toHaveLength(1);
    expect(dead()[0]!.headers).toMatchObject({ 'x-dead-consumer': 'connector', 'x-dead-topic': SENDS, 'x-dead-offset': '11' });
    expect(dead()[0]!.headers!['x-dead-error']).toMatch(/^refused: .*never executed$/);
    expect(resolved).toEqual([10, 11, 12]);
    expect(commits).toEqual([`${SENDS} 0 13`]);
  });

  it('dead-letters an undecodable record and a send that fails for good, and executes the rest', async () => {
    const { commands, calls, commits, dead } = batches({
      execute: async (sends) => {
        if (sends.some((s) => s.message_id === 'bad')) throw GatewayFailure.nonRetryable('value too long for type');
        calls.push(`send ${sends.map((s) => s.message_id).join(',')}`);
      },
    });
    const records = [record(SENDS, 0, send('a')), poison(SENDS, 1), record(SENDS, 2, send('b')), record(SENDS, 3, send('bad')), record(SENDS, 4, send('c'))];
    const { batch } = memoryBatch(SENDS, records);
    await commands.apply(batch);
    expect(calls).toEqual(['send a', 'dead 1', 'send b', 'dead 3', 'send c']);
    expect(dead().map((d) => [d.headers!['x-dead-offset'], d.headers!['x-dead-error']])).toEqual([
      ['1', 'unknown magic byte'],
      ['3', 'value too long for type'],
    ]);
    expect(commits).toEqual([`${SENDS} 0 5`]);
  });

  it('waits (paused) while the states are loading, and for states of a number it does not know yet', async () => {
    let loaded = false;
    const waiting = batches({ isLoaded: () => loaded });
    await waiting.commands.apply(memoryBatch(SENDS, [record(SENDS, 0, send('a'))]).batch);
    expect(waiting.calls).toEqual(['pause 0']);
    expect(waiting.commits).toEqual([]);

    loaded = true;
    const unknown = batches({ knows: (id) => id === 'i1', statesMayBeBehind: async () => true });
    const records = [record(SENDS, 0, send('a')), record(SENDS, 1, { ...send('x'), instance_id: 'i2' }), record(SENDS, 2, send('b'))];
    const { batch, resolved } = memoryBatch(SENDS, records);
    await unknown.commands.apply(batch);
    expect(unknown.calls).toEqual(['send a', 'pause 0']);
    expect(resolved).toEqual([0]);
    expect(unknown.commits).toEqual([`${SENDS} 0 1`]);
  });

  it('logs and skips a connector command that fails', async () => {
    const { commands, commits } = batches({ controls: controls(async () => Promise.reject(new Error('no session'))) });
    await commands.apply(memoryBatch(CONTROLS, [record(CONTROLS, 0, control('scan'))]).batch);
    expect(commits).toEqual([`${CONTROLS} 0 1`]);
  });
});
