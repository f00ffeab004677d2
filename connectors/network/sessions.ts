import type { Logger } from 'pino';
import type { InstanceId } from '../../schemas/ids.js';
import type { InstanceState } from '../../schemas/records.js';
import { topics, type ConsumedRecord, type Producer } from '../../topics/index.js';
import type { NetworkConnector, NumberSession, SessionFact, StatusFact } from './connector.js';
import { callRecord, groupRecord, inboundRecord, nextState, pairingRecord } from './fact-records.js';
import { newEventId } from './ids.js';
import type { KeyedSerial } from '../../shared/serial.js';

export interface SessionsDeps {
  readonly connectors: readonly NetworkConnector[];
  readonly producer: Pick<Producer, 'send'>;
  /** The per-number writer of the role: the records of one number go out in the order they happened. */
  readonly writer: KeyedSerial;
  readonly logger: Logger;
  /** Whether the sessions of a partition are open; until then a new number only gets its state. */
  readonly isOpened: (partition: number) => boolean;
  /** Writes a receipt of one of our sends; `current` is false once the session that saw it has closed. */
  readonly writeReceipt: (instanceId: InstanceId, fact: StatusFact, current: () => boolean) => Promise<void>;
}

/** A number whose partition this worker owns. */
export interface OwnedNumber {
  /** Its full current state: the last record read, then our own writes. */
  state: InstanceState;
  readonly partition: number;
  session?: NumberSession;
  /** Event ids of states we wrote and have not read back yet. */
  readonly pending: Set<string>;
}

/**
 * The numbers of the owned partitions and their sessions: states read from the log open, update
 * and log out sessions; what the sessions observe is written back to the log, in order per number.
 */
export class OwnedSessions {
  private readonly numbers = new Map<string, OwnedNumber>();
  private readonly connectors: ReadonlyMap<string, NetworkConnector>;

  constructor(private readonly deps: SessionsDeps) {
    this.connectors = new Map(deps.connectors.map((c) => [c.kind, c]));
  }

  /** The number as this worker holds it; undefined when the number is unknown here. */
  numberOf(instanceId: string): OwnedNumber | undefined {
    return this.numbers.get(instanceId);
  }

  /** Applies one record of the state topic. */
  async applyState(record: ConsumedRecord<InstanceState>): Promise<void> {
    if (!record.decoded.ok) {
      this.deps.logger.warn({ err: record.decoded.error, offset: record.offset }, 'undecodable number state skipped');
      return;
    }
    const state = record.decoded.value;
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
      if (this.deps.isOpened(record.partition)) await this.open(number);
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

  /** Opens the sessions of the numbers of a partition whose states are loaded. */
  async openPartition(p: number): Promise<void> {
    await Promise.all(this.inPartition(p).map((n) => this.open(n)));
  }

  /** Closes the sessions of a partition that moved away (they keep their auth state). */
  async closePartition(p: number): Promise<void> {
    await Promise.all(this.inPartition(p).map((n) => this.drop(n, 'close')));
  }

  /** Resolves once every record written so far is on the log. */
  drain(): Promise<void> {
    return this.deps.writer.drain();
  }

  private inPartition(p: number): OwnedNumber[] {
    return [...this.numbers.values()].filter((n) => n.partition === p);
  }

  private async open(number: OwnedNumber): Promise<void> {
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

  /**
   * Writes a fact of a session, in order with the other records of its number. A closed session's
   * states and pairings are dropped; what it received is written (a closing session drains what the
   * network already counts as delivered).
   */
  private onFact(number: OwnedNumber, fact: SessionFact): Promise<void> {
    const id = number.state.instance_id;
    if (fact.kind === 'status') return this.deps.writeReceipt(id, fact, () => this.numbers.get(id) === number);
    return this.deps.writer.run(id, async () => {
      if (this.numbers.get(id) !== number && fact.kind !== 'inbound' && fact.kind !== 'group') return;
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
        case 'call':
          await producer.send(topics.calls, [{ key: id, value: callRecord(number.state, fact.call) }]);
          return;
      }
    });
  }

  private writeState(number: OwnedNumber, state: InstanceState): Promise<void> {
    return this.deps.writer.run(state.instance_id, async () => {
      if (this.numbers.get(state.instance_id) === number) await this.writeStateNow(number, state);
    });
  }

  private async writeStateNow(number: OwnedNumber, state: InstanceState): Promise<void> {
    number.state = state;
    number.pending.add(state.event_id);
    await this.deps.producer.send(topics.instances, [{ key: state.instance_id, value: state }]);
  }
}
