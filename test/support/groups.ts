import kafkajs, { type Admin, type GroupDescription, type MemberDescription } from 'kafkajs';

const { AssignerProtocol } = kafkajs;

/** The consumer groups of a test's slice (their ids start with its prefix), described. */
export async function groupsOf(admin: Admin, prefix: string): Promise<GroupDescription[]> {
  const ids = (await admin.listGroups()).groups.map((g) => g.groupId).filter((id) => id.startsWith(prefix));
  return (await admin.describeGroups(ids)).groups;
}

/** The partitions a member was assigned, as `topic/partition`, sorted. */
export function partitionsOf(member: MemberDescription): string[] {
  if (member.memberAssignment.length === 0) return [];
  const assignment = AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment ?? {};
  return Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => `${topic}/${p}`)).sort();
}
