import type { Admin, GroupDescription } from 'kafkajs';

/** The consumer groups of a test's slice (their ids start with its prefix), described. */
export async function groupsOf(admin: Admin, prefix: string): Promise<GroupDescription[]> {
  const ids = (await admin.listGroups()).groups.map((g) => g.groupId).filter((id) => id.startsWith(prefix));
  return (await admin.describeGroups(ids)).groups;
}
