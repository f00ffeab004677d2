import { Boom } from '@hapi/boom';
import type { GroupMetadata, WASocket } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { groupAnswer } from '../../connectors/baileys/groups.js';
import { QueryRefused } from '../../connectors/network/query.js';

const GROUP = '120363040000000001@g.us';
const metadata: GroupMetadata = {
  id: GROUP,
  subject: 'Padaria',
  owner: '900000000000001@lid',
  ownerPn: '5511900000000@s.whatsapp.net',
  creation: 1_764_000_000,
  desc: 'Pães do dia',
  size: 2,
  participants: [
    { id: '900000000000001@lid', phoneNumber: '5511900000000@s.whatsapp.net', admin: 'superadmin' },
    { id: '123456789012345@lid', admin: null },
  ],
};

/** A socket answering as the network would, each group call recorded. */
function socket(overrides: Partial<WASocket> = {}) {
  const calls: unknown[][] = [];
  const fake = {
    groupFetchAllParticipating: async () => ({ [GROUP]: metadata }),
    groupMetadata: async (jid: string) => (calls.push(['metadata', jid]), metadata),
    groupCreate: async (subject: string, people: string[]) => (calls.push(['create', subject, people]), { ...metadata, subject }),
    groupParticipantsUpdate: async (jid: string, people: string[], action: string) => (
      calls.push(['update', jid, people, action]), people.map((p, i) => ({ jid: p, status: i === 0 ? '200' : '409', content: { tag: 'participant', attrs: {} } }))
    ),
    groupInviteCode: async (jid: string) => (calls.push(['invite', jid]), 'AbCdEf123'),
    ...overrides,
  };
  return { socket: fake as unknown as WASocket, calls };
}

describe('group queries on a Baileys socket', () => {
  it('maps group metadata: phone jids where the network gives them, lids kept, roles, times in ms', async () => {
    const { socket: s, calls } = socket();
    expect(await groupAnswer(s, { kind: 'group_metadata', group_jid: GROUP })).toEqual({
      kind: 'group',
      jid: GROUP,
      subject: 'Padaria',
      description: 'Pães do dia',
      owner: '5511900000000@s.whatsapp.net',
      created_at: 1_764_000_000_000,
      size: 2,
      participants: [
        { jid: '5511900000000@s.whatsapp.net', lid: '900000000000001@lid', role: 'superadmin' },
        { jid: '123456789012345@lid', lid: '123456789012345@lid', role: 'member' },
      ],
    });
    const listed = await groupAnswer(s, { kind: 'list_groups', with_participants: false });
    expect(listed).toMatchObject({ kind: 'groups', groups: [{ jid: GROUP, participants: [] }] });
    expect(calls).toEqual([['metadata', GROUP]]);
  });

  it('creates, updates participants (per-participant results in our words) and reads the invite link', async () => {
    const { socket: s, calls } = socket();
    expect(await groupAnswer(s, { kind: 'create_group', subject: 'Novo', participants: ['5511988887777@s.whatsapp.net'] })).toMatchObject({ kind: 'group', subject: 'Novo' });
    const updated = await groupAnswer(s, { kind: 'update_participants', group_jid: GROUP, action: 'promote', participants: ['a@s.whatsapp.net', 'b@s.whatsapp.net'] });
    expect(updated).toEqual({ kind: 'participants_updated', results: [{ jid: 'a@s.whatsapp.net', status: 'ok' }, { jid: 'b@s.whatsapp.net', status: 'conflict' }] });
    expect(await groupAnswer(s, { kind: 'group_invite', group_jid: GROUP })).toEqual({ kind: 'invite_link', code: 'AbCdEf123', link: 'https://chat.whatsapp.com/AbCdEf123' });
    expect(calls.map((c) => c[0])).toEqual(['create', 'update', 'invite']);
  });

  it("refuses a jid that is no group, and turns the network's refusals into the API's codes", async () => {
    const refused = (query: Parameters<typeof groupAnswer>[1], s: WASocket) => groupAnswer(s, query).then(() => undefined, (e: unknown) => e);
    expect(await refused({ kind: 'group_metadata', group_jid: '5511988887777@s.whatsapp.net' }, socket().socket)).toMatchObject({ code: 'invalid_request' });
    const gone = socket({ groupMetadata: async () => { throw new Boom('item-not-found', { statusCode: 404 }); } }).socket;
    const notFound = await refused({ kind: 'group_metadata', group_jid: GROUP }, gone);
    expect(notFound).toBeInstanceOf(QueryRefused);
    expect(notFound).toMatchObject({ code: 'not_found' });
    const notAdmin = socket({ groupInviteCode: async () => { throw new Boom('not-authorized', { statusCode: 401 }); } }).socket;
    expect(await refused({ kind: 'group_invite', group_jid: GROUP }, notAdmin)).toMatchObject({ code: 'invalid_request' });
  });
});
