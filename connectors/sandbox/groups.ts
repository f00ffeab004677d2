import { randomBytes, randomInt } from 'node:crypto';
import type { GroupInfo, GroupParticipant, GroupRole, ParticipantAction } from '../../schemas/records.js';
import { isGroupJid } from '../../schemas/phones.js';
import type { GroupFact } from '../network/connector.js';
import { QueryRefused, type Answers, type SessionQuery } from '../network/query.js';

type GroupQuery = Extract<SessionQuery, { kind: 'list_groups' | 'group_metadata' | 'create_group' | 'update_participants' | 'group_invite' }>;
export type GroupAnswer = Answers[GroupQuery['kind']];

interface Group {
  readonly jid: string;
  readonly subject: string;
  readonly createdAt: number;
  readonly owner: string;
  readonly inviteCode: string;
  /** Participant jid → role. */
  readonly members: Map<string, GroupRole>;
}

/** How many groups a sandbox number keeps (the simulated network forgets the oldest). */
const KEPT = 1_000;

/**
 * The groups of one sandbox number, in memory (a reopened session starts with none): what the
 * group routes read and change. Only an admin changes participants or reads the invite link,
 * as on the network; each change the number makes comes back as the group facts the network
 * would send (joined, participant_added, ...), through `facts`.
 */
export class SandboxGroups {
  private readonly groups = new Map<string, Group>();

  constructor(private readonly own: () => string) {}

  /** The answer to a group query, and the group facts it caused. */
  answer(query: GroupQuery, now: number): { readonly answer: GroupAnswer; readonly facts: readonly GroupFact[] } {
    switch (query.kind) {
      case 'list_groups':
        return { answer: { kind: 'groups', groups: [...this.groups.values()].map((g) => info(g, query.with_participants)) }, facts: [] };
      case 'group_metadata':
        return { answer: info(this.find(query.group_jid), true), facts: [] };
      case 'create_group':
        return this.create(query.subject, query.participants, now);
      case 'update_participants':
        return this.update(this.administered(query.group_jid), query.action, query.participants, now);
      case 'group_invite': {
        const { inviteCode: code } = this.administered(query.group_jid);
        return { answer: { kind: 'invite_link', code, link: `https://chat.whatsapp.com/${code}` }, facts: [] };
      }
    }
  }

  private create(subject: string, participants: readonly string[], now: number) {
    const owner = this.own();
    const group: Group = {
      jid: `120363${randomInt(10 ** 11, 10 ** 12)}@g.us`,
      subject,
      createdAt: now,
      owner,
      inviteCode: randomBytes(16).toString('base64url').slice(0, 22),
      members: new Map<string, GroupRole>([[owner, 'superadmin'], ...participants.filter((p) => p !== owner).map((p): [string, GroupRole] => [p, 'member'])]),
    };
    this.groups.set(group.jid, group);
    if (this.groups.size > KEPT) this.groups.delete(this.groups.keys().next().value!);
    const joined: GroupFact = { occurred_at: now, kind: 'joined', group: { jid: group.jid, name: subject }, author: owner, participants: [], subject, description: null };
    return { answer: info(group, true), facts: [joined] };
  }

  private update(group: Group, action: ParticipantAction, participants: readonly string[], now: number) {
    const results = participants.map((jid) => ({ jid, status: this.apply(group, action, jid) }));
    const changed = results.filter((r) => r.status === 'ok').map((r) => ({ jid: r.jid, lid: null, name: null, phone: null }));
    const kind = ({ add: 'participant_added', remove: 'participant_removed', promote: 'participant_promoted', demote: 'participant_demoted' } as const)[action];
    const facts: GroupFact[] =
      changed.length === 0 ? [] : [{ occurred_at: now, kind, group: { jid: group.jid, name: group.subject }, author: this.own(), participants: changed, subject: null, description: null }];
    return { answer: { kind: 'participants_updated' as const, results }, facts };
  }

  /** One participant's change: `ok`, or why not (the network's words). */
  private apply(group: Group, action: ParticipantAction, jid: string): string {
    const role = group.members.get(jid);
    if (action === 'add') {
      if (role !== undefined) return 'conflict';
      group.members.set(jid, 'member');
      return 'ok';
    }
    if (role === undefined) return 'not_found';
    if (role === 'superadmin') return 'forbidden';
    if (action === 'remove') group.members.delete(jid);
    else group.members.set(jid, action === 'promote' ? 'admin' : 'member');
    return 'ok';
  }

  private find(jid: string): Group {
    if (!isGroupJid(jid)) throw new QueryRefused('invalid_request', `${jid} is not a group jid`);
    const group = this.groups.get(jid);
    if (group === undefined) throw new QueryRefused('not_found', `the number is not in the group ${jid}`);
    return group;
  }

  private administered(jid: string): Group {
    const group = this.find(jid);
    if (group.members.get(this.own()) === 'member') throw new QueryRefused('invalid_request', 'the number is not an admin of the group');
    return group;
  }
}

function info(group: Group, withParticipants: boolean): GroupInfo {
  const participants: GroupParticipant[] = [...group.members].map(([jid, role]) => ({ jid, lid: jid.endsWith('@lid') ? jid : null, role }));
  return {
    kind: 'group',
    jid: group.jid,
    subject: group.subject,
    description: null,
    owner: group.owner,
    created_at: group.createdAt,
    size: group.members.size,
    participants: withParticipants ? participants : [],
  };
}
