import type { Admin, Consumer, Kafka } from 'kafkajs';

/** One consumer's membership of its group, as the group's coordinator knows it. */
export interface GroupMember {
  readonly groupId: string;
  readonly memberId: string;
  /** Its static instance id (`GATEWAY_INSTANCE_ID`), or null for a dynamic member. */
  readonly groupInstanceId: string | null;
}

/** A consumer of this process (`consumer` numbers it within the process) joined as `member`, or left (`member` undefined). */
export interface MemberChange {
  readonly consumer: number;
  readonly member: GroupMember | undefined;
}

/**
 * The members this process's consumers hold now: each join (a rebalance may give a consumer a new
 * member id) replaces its consumer's member, and a disconnect removes it. A listener hears every
 * change, so that the members can be removed on this process's behalf if it dies (`MemberRemover`).
 */
export class GroupMembers {
  private readonly current = new Map<number, GroupMember>();
  private readonly listeners = new Set<(change: MemberChange) => void>();
  private consumers = 0;

  follow(consumer: Consumer, groupId: string, groupInstanceId: string | undefined): void {
    const key = ++this.consumers;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.change(key, { groupId, memberId: payload.memberId, groupInstanceId: groupInstanceId ?? null }));
    consumer.on(consumer.events.DISCONNECT, () => this.change(key, undefined));
  }

  /** Every member held now, by consumer. */
  held(): MemberChange[] {
    return [...this.current].map(([consumer, member]) => ({ consumer, member }));
  }

  /** Calls `listener` on every change from now on; returns the call that stops it. */
  listen(listener: (change: MemberChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private change(consumer: number, member: GroupMember | undefined): void {
    if (member) this.current.set(consumer, member);
    else if (!this.current.delete(consumer)) return;
    for (const listener of this.listeners) listener({ consumer, member });
  }
}

/** What became of a member that `MemberRemover.remove` removed on behalf of its process. */
export interface RemovedMember extends GroupMember {
  /** `removed`; `gone` when the group no longer knew it; `replaced` when a newer member holds its instance id (its process restarted under its name). */
  readonly outcome: 'removed' | 'gone' | 'replaced';
}

/** Removes members whose process died from their groups, so that their partitions move now rather than when their sessions end. */
export interface MemberRemover {
  /** The id of the Kafka cluster the members belong to; a member of another is not this remover's to remove. */
  readonly clusterId: string;
  remove(members: readonly GroupMember[]): Promise<RemovedMember[]>;
  close(): Promise<void>;
}

const outcomes = { none: 'removed', UNKNOWN_MEMBER_ID: 'gone', FENCED_INSTANCE_ID: 'replaced' } as const;

export async function createMemberRemover(kafka: Kafka): Promise<MemberRemover> {
  const admin: Admin = kafka.admin();
  await admin.connect();
  try {
    const { clusterId } = await admin.describeCluster();
    return {
      clusterId,
      async remove(members) {
        const byGroup = new Map<string, GroupMember[]>();
        for (const member of members) byGroup.set(member.groupId, [...(byGroup.get(member.groupId) ?? []), member]);
        const results = await Promise.all(
          [...byGroup].map(async ([groupId, inGroup]) => {
            const answers = await admin.removeGroupMembers({ groupId, members: inGroup.map(({ memberId, groupInstanceId }) => ({ memberId, groupInstanceId })) });
            return answers.map(({ memberId, groupInstanceId, error }): RemovedMember => ({ groupId, memberId, groupInstanceId, outcome: outcomes[error ?? 'none'] }));
          }),
        );
        return results.flat();
      },
      close: () => admin.disconnect(),
    };
  } catch (error) {
    await admin.disconnect();
    throw error;
  }
}
