import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

/**
 * A share of every topic's partitions: those whose number modulo `of` is `index`. Members that
 * split a backlog by shares, each in a group of its own, all start on their first fetch: members
 * of one group would start one after the other, and the first to join would take every partition
 * until a rebalance, which a member notices only between fetches (a replay's fetch holds tens of
 * megabytes).
 */
export interface PartitionShare {
  readonly index: number;
  readonly of: number;
}

export function inShare(partition: number, share: PartitionShare): boolean {
  return partition % share.of === share.index;
}

/** Assigns the members of a group (one, as a share is used) the partitions of its share, round robin. */
export function shareAssigner(share: PartitionShare): PartitionAssigner {
  const name = `GatewayShare${share.index}of${share.of}`;
  return ({ cluster }) => ({
    name,
    version: 0,
    async assign({ members, topics }) {
      const memberIds = members.map((member) => member.memberId).sort();
      const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
      let next = 0;
      for (const topic of topics) {
        for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
          if (!inShare(partitionId, share)) continue;
          const of = assignment.get(memberIds[next++ % memberIds.length]!)!;
          (of[topic] ??= []).push(partitionId);
        }
      }
      return [...assignment].map(([memberId, topicPartitions]) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: topicPartitions, userData: Buffer.alloc(0) }),
      }));
    },
    protocol({ topics }) {
      return { name, metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) };
    },
  });
}
