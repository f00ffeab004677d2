import { AssignerProtocol, type Assigner } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { assignSlots, coPartitionedAssigner } from '../../topics/index.js';

const all = (count: number) => Array.from({ length: count }, (_, i) => i);
const sizes = (result: Map<string, number[]>) => [...result.values()].map((slots) => slots.length);
const union = (result: Map<string, number[]>) => [...result.values()].flat().sort((a, b) => a - b);

describe('assignSlots', () => {
  it('gives every slot to exactly one member, balanced within one', () => {
    for (const n of [1, 2, 3, 5, 7, 12, 13]) {
      const members = Array.from({ length: n }, (_, i) => ({ id: `m${i}`, owned: [] }));
      const result = assignSlots(members, 12);
      expect(union(result)).toEqual(all(12));
      expect(Math.max(...sizes(result)) - Math.min(...sizes(result))).toBeLessThanOrEqual(1);
    }
  });

  it('keeps what a member owns when a second member joins: only the other half moves', () => {
    const result = assignSlots([{ id: 'a', owned: all(12) }, { id: 'b', owned: [] }], 12);
    expect(result.get('a')).toHaveLength(6);
    expect(result.get('b')).toHaveLength(6);
    expect(union(result)).toEqual(all(12));
  });

  it('keeps the survivors in place when a member leaves', () => {
    const before = assignSlots([{ id: 'a', owned: [] }, { id: 'b', owned: [] }, { id: 'c', owned: [] }], 12);
    const after = assignSlots([{ id: 'a', owned: before.get('a')! }, { id: 'c', owned: before.get('c')! }], 12);
    for (const id of ['a', 'c']) expect(after.get(id)).toEqual(expect.arrayContaining(before.get(id)!));
    expect(union(after)).toEqual(all(12));
  });

  it('settles two claims of one slot, and ignores slots that do not exist', () => {
    const result = assignSlots([{ id: 'a', owned: [0, 1, 99, -1] }, { id: 'b', owned: [1, 2] }], 4);
    expect(union(result)).toEqual(all(4));
    expect(result.get('a')).toEqual([0, 1]);
    expect(result.get('b')).toEqual([2, 3]);
  });

  it('answers the same whatever the order the members come in', () => {
    const members = [{ id: 'x', owned: [3, 4] }, { id: 'y', owned: [] }, { id: 'z', owned: [0] }];
    expect(assignSlots([...members].reverse(), 12)).toEqual(assignSlots(members, 12));
  });
});

describe('the co-partitioned kafkajs assigner', () => {
  const topics = ['gw.instances', 'gw.commands.send', 'gw.sandbox.commands'];
  const cluster = { findTopicPartitionMetadata: () => all(12).map((partitionId) => ({ partitionId })) };
  const assigner = (owned: number[]): Assigner =>
    coPartitionedAssigner(() => owned)({ cluster: cluster as never, groupId: 'g', logger: undefined as never });

  it('gives partition p of every topic to the same member, keeping announced ownership', async () => {
    const a = assigner([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const b = assigner([]);
    const members = [
      { memberId: 'member-a', memberMetadata: a.protocol({ topics }).metadata },
      { memberId: 'member-b', memberMetadata: b.protocol({ topics }).metadata },
    ];
    const result = await a.assign({ members, topics });
    const decoded = new Map(result.map((r) => [r.memberId, AssignerProtocol.MemberAssignment.decode(r.memberAssignment)!.assignment]));
    const ofA = decoded.get('member-a')!;
    const ofB = decoded.get('member-b')!;
    for (const topic of topics) {
      expect(ofA[topic]).toEqual(ofA['gw.instances']);
      expect(ofB[topic]).toEqual(ofB['gw.instances']);
    }
    expect(ofA['gw.instances']).toHaveLength(6);
    expect([...ofA['gw.instances']!, ...ofB['gw.instances']!].sort((x, y) => x - y)).toEqual(all(12));
  });

  it('treats metadata without ownership (another client) as owning nothing', async () => {
    const a = assigner([]);
    const foreign = AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.from('not json') });
    const result = await a.assign({ members: [{ memberId: 'm', memberMetadata: foreign }], topics });
    expect(AssignerProtocol.MemberAssignment.decode(result[0]!.memberAssignment)!.assignment['gw.instances']).toEqual(all(12));
  });
});
