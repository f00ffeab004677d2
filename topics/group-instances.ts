import type { Consumer } from 'kafkajs';
import { hasProtocolError } from './failure.js';

const FENCED = new Set(['FENCED_INSTANCE_ID']);

/** A member of a group that another process joined under the same instance id. */
export interface FencedMember {
  readonly groupId: string;
  readonly groupInstanceId: string;
}

/**
 * Static membership (KIP-345) for the consumers of one process: each joins its group under an
 * instance id made from `GATEWAY_INSTANCE_ID`, so a process restarted under the same id takes
 * back its predecessor's partitions at once, without a rebalance and without waiting for the
 * killed member's session to end. A process's first consumer of a group joins as the id itself,
 * a second one beside it as `<id>.2`, and so on; a stopped consumer's slot is taken again.
 */
export class GroupInstances {
  private readonly held = new Map<string, Set<string>>();
  private markFenced: (member: FencedMember) => void = () => {};
  /** Resolves when a broker fenced one of this process's members: another process runs under its id. */
  readonly fenced = new Promise<FencedMember>((resolve) => (this.markFenced = resolve));

  constructor(private readonly instanceId: string) {}

  /** The instance id a new consumer of `groupId` joins under: the first one not held by a connected consumer of this process. */
  take(groupId: string): string {
    const held = this.held.get(groupId) ?? new Set<string>();
    this.held.set(groupId, held);
    let slot = 1;
    while (held.has(this.idOf(slot))) slot++;
    held.add(this.idOf(slot));
    return this.idOf(slot);
  }

  /** Gives `groupInstanceId` back when `consumer` disconnects, and tells `fenced` when a broker fences it. */
  follow(consumer: Consumer, groupId: string, groupInstanceId: string): void {
    consumer.on(consumer.events.DISCONNECT, () => this.held.get(groupId)?.delete(groupInstanceId));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (hasProtocolError(payload.error, FENCED)) this.markFenced({ groupId, groupInstanceId });
    });
  }

  private idOf(slot: number): string {
    return slot === 1 ? this.instanceId : `${this.instanceId}.${slot}`;
  }
}
