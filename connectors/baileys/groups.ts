import { isJidGroup, jidNormalizedUser, type GroupMetadata, type GroupParticipant as BaileysParticipant, type WASocket } from '@whiskeysockets/baileys';
import type { GroupInfo, GroupParticipant } from '../../schemas/records.js';
import type { Answers, QueryHandlers } from '../network/query.js';
import { QueryRefused, type SessionQuery } from '../network/query.js';

type GroupQuery = Extract<SessionQuery, { kind: 'list_groups' | 'group_metadata' | 'create_group' | 'update_participants' | 'group_invite' }>;
export type GroupAnswer = Answers[GroupQuery['kind']];

/** Result codes of `groupParticipantsUpdate` (per participant, as HTTP-like statuses) in our words. */
const PARTICIPANT_STATUS: Readonly<Record<string, string>> = { '200': 'ok', '403': 'forbidden', '404': 'not_found', '408': 'recently_left', '409': 'conflict' };

/**
 * The group queries of the API on a Baileys socket: `groupFetchAllParticipating`, `groupMetadata`,
 * `groupCreate`, `groupParticipantsUpdate` and `groupInviteCode`. A group the number is not in
 * answers `not_found`; an action the network refuses (not an admin) `invalid_request`.
 */
export async function groupAnswer(socket: WASocket, query: GroupQuery): Promise<GroupAnswer> {
  switch (query.kind) {
    case 'list_groups': {
      const groups = await socket.groupFetchAllParticipating();
      return { kind: 'groups', groups: Object.values(groups).map((group) => groupInfo(group, query.with_participants)) };
    }
    case 'group_metadata':
      return groupInfo(await refusing(() => socket.groupMetadata(checked(query.group_jid))), true);
    case 'create_group':
      return groupInfo(await refusing(() => socket.groupCreate(query.subject, [...query.participants])), true);
    case 'update_participants': {
      const results = await refusing(() => socket.groupParticipantsUpdate(checked(query.group_jid), [...query.participants], query.action));
      return { kind: 'participants_updated', results: results.map((r) => ({ jid: r.jid ?? '', status: PARTICIPANT_STATUS[r.status] ?? r.status })) };
    }
    case 'group_invite': {
      const code = await refusing(() => socket.groupInviteCode(checked(query.group_jid)));
      if (!code) throw new QueryRefused('invalid_request', 'the network gave no invite code (is the number an admin of the group?)');
      return { kind: 'invite_link', code, link: `https://chat.whatsapp.com/${code}` };
    }
  }
}

/** The group kinds of a session's query handlers. */
export function groupHandlers(socket: WASocket): Pick<QueryHandlers, GroupQuery['kind']> {
  const answer = <K extends GroupQuery['kind']>(query: Extract<GroupQuery, { kind: K }>) => groupAnswer(socket, query) as Promise<Answers[K]>;
  return { list_groups: answer, group_metadata: answer, create_group: answer, update_participants: answer, group_invite: answer };
}

export function groupInfo(group: GroupMetadata, withParticipants: boolean): GroupInfo {
  return {
    kind: 'group',
    jid: group.id,
    subject: group.subject,
    description: group.desc ?? null,
    owner: group.ownerPn ?? group.owner ?? null,
    created_at: group.creation === undefined ? null : group.creation * 1000,
    size: group.size ?? group.participants.length,
    participants: withParticipants ? group.participants.map(participant) : [],
  };
}

function participant(p: BaileysParticipant): GroupParticipant {
  const lid = p.lid ?? (p.id.endsWith('@lid') ? p.id : null);
  const jid = p.phoneNumber ? jidNormalizedUser(p.phoneNumber) : p.id;
  return { jid, lid, role: p.admin ?? 'member' };
}

function checked(jid: string): string {
  if (!isJidGroup(jid)) throw new QueryRefused('invalid_request', `${jid} is not a group jid`);
  return jid;
}

/** The network's refusals (a Boom with an HTTP status) in the API's codes. */
async function refusing<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (error instanceof QueryRefused) throw error;
    const status = (error as { output?: { statusCode?: number } }).output?.statusCode;
    const reason = error instanceof Error ? error.message : String(error);
    if (status === 404 || status === 406) throw new QueryRefused('not_found', `the network does not know this group: ${reason}`);
    if (status === 401 || status === 403 || status === 400) throw new QueryRefused('invalid_request', `the network refused: ${reason}`);
    throw error;
  }
}
