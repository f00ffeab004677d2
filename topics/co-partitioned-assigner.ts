import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

/** A group member and the partition numbers ("slots") it owns now. */
export interface SlotMember {
  readonly id: string;
  readonly owned: readonly number[];
}

/**
 * Deals the slots 0..count-1 among members: each gets count/n of them (members that own more now
 * take the remainder), keeps the slots it already owns up to that share, and the free slots go
 * to the members below their share, lowest first. The same input always gives the same answer.
 */
export function assignSlots(members: readonly SlotMember[], count: number): Map<string, number[]> {
  const sorted = [...members].sort((a, b) => compare(a.id, b.id));
  const result = new Map<string, number[]>(sorted.map((m) => [m.id, []]));
  if (sorted.length === 0) return result;
  const valid = (m: SlotMember) => new Set(m.owned.filter((slot) => Number.isInteger(slot) && slot >= 0 && slot < count));
  const base = Math.floor(count / sorted.length);
  const extra = count % sorted.length;
  const byOwnership = [...sorted].sort((a, b) => valid(b).size - valid(a).size || compare(a.id, b.id));
  const share = new Map(byOwnership.map((m, i) => [m.id, base + (i < extra ? 1 : 0)]));

  const taken = new Set<number>();
  for (const member of sorted) {
    const slots = result.get(member.id)!;
    for (const slot of valid(member)) {
      if (slots.length >= share.get(member.id)! || taken.has(slot)) continue;
      slots.push(slot);
      taken.add(slot);
    }
  }
  const free = Array.from({ length: count }, (_, slot) => slot).filter((slot) => !taken.has(slot));
  for (const member of sorted) {
    const slots = result.get(member.id)!;
    while (slots.length < share.get(member.id)! && free.length > 0) slots.push(free.shift()!);
    slots.sort((a, b) => a - b);
  }
  return result;
}

export const CO_PARTITIONED = 'CoPartitioned';

/**
 * A kafkajs partition assigner that gives partition p of every subscribed topic to the same member,
 * so the member owning a number's state partition also owns its commands and controls. Members
 * announce the slots they own (`owned`) when they join, and keep them across rebalances where the
 * balance allows, so sessions move only when they must.
 */
export function coPartitionedAssigner(owned: () => readonly number[]): PartitionAssigner {
  return ({ cluster }) => ({
    name: CO_PARTITIONED,
    version: 1,
    async assign({ members, topics }) {
      const partitionsOf = new Map(topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId)]));
      const count = Math.max(0, ...[...partitionsOf.values()].flat().map((p) => p + 1));
      const slots = assignSlots(
        members.map((m) => ({ id: m.memberId, owned: announcedSlots(m.memberMetadata) })),
        count,
      );
      return members.map(({ memberId }) => {
        const mine = new Set(slots.get(memberId));
        const assignment = Object.fromEntries(topics.map((topic) => [topic, (partitionsOf.get(topic) ?? []).filter((p) => mine.has(p))]));
        return { memberId, memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }) };
      });
    },
    protocol({ topics }) {
      const userData = Buffer.from(JSON.stringify(owned()));
      return { name: CO_PARTITIONED, metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData }) };
    },
  });
}

function announcedSlots(metadata: Buffer): number[] {
  try {
    const parsed: unknown = JSON.parse(AssignerProtocol.MemberMetadata.decode(metadata)?.userData.toString('utf8') || '[]');
    return Array.isArray(parsed) ? parsed.filter((slot): slot is number => Number.isInteger(slot)) : [];
  } catch {
    return [];
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
