import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { contactGroup, contactGroups, groupMembers, memberIds, type ContactGroupRow, type MemberRow } from '../../processors/audience/index.js';
import { knownContactIds } from '../../processors/contacts/index.js';
import { groupMemberId } from '../../schemas/contact-ids.js';
import { newId } from '../../schemas/ids.js';
import type { RouteOptions } from '../context.js';
import { Cursor, decodeCursor, Limit, NextCursor, paginate } from '../conversations/cursor.js';
import { gatewayError } from '../errors.js';
import { audienceRecord, writeAudience } from '../../processors/audience/write.js';

const Timestamp = Type.String({ format: 'date-time' });
const GroupOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  members: Type.Integer({ description: 'Contacts in the group' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const MemberOut = Type.Object({
  id: Type.String({ description: 'The contact id' }),
  phone: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  opted_out: Type.Boolean(),
  added_at: Timestamp,
});
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Trimmed; names may repeat' });
const NameBody = Type.Object({ name: Name }, { additionalProperties: false });
const GroupParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const MemberParams = Type.Object({ id: Type.String({ maxLength: 64 }), contact_id: Type.String({ maxLength: 64 }) });
const Page = Type.Object({ limit: Limit, cursor: Type.Optional(Cursor) });
/** Contacts added in one call. */
const MAX_ADD = 1000;

function groupOut(row: ContactGroupRow): Static<typeof GroupOut> {
  return { id: row.group_id, name: row.name, members: row.members, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

function memberOut(row: MemberRow): Static<typeof MemberOut> {
  return { id: row.contact_id, phone: row.phone, name: row.name, tags: row.tags, opted_out: row.opted_out, added_at: row.added_at.toISOString() };
}

/**
 * `/contact-groups`: named groups of the account's contacts, for audiences (a campaign to a group).
 * A group and each membership are entries of the compacted `gw.audience`; a contact may be in
 * many groups. Part of the account-wide contact base (spec 5).
 */
export const contactGroupRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { pool, producer } = ctx.clients;
  const read = { scope: 'contacts:read', partnerKeys: false } as const;
  const write = { scope: 'contacts:write', partnerKeys: false } as const;
  const tags = ['contacts'];

  const groupOf = async (accountId: string, groupId: string): Promise<ContactGroupRow> => {
    const row = await contactGroup(pool, accountId, groupId);
    if (row === undefined) throw gatewayError('not_found');
    return row;
  };
  /** Writes the group's record and answers it as the projection shows it once applied. */
  const saveGroup = async (accountId: string, groupId: string, name: string, createdAt: number): Promise<ContactGroupRow> => {
    const at = Date.now();
    let saved: ContactGroupRow | undefined;
    await writeAudience(producer, [audienceRecord(accountId, groupId, { kind: 'contact_group', name, created_at: createdAt }, at)], async () => {
      saved = await contactGroup(pool, accountId, groupId);
      return saved?.name === name && saved.updated_at.getTime() >= at;
    });
    return saved!;
  };

  app.post(
    '/contact-groups',
    { config: write, schema: { tags, summary: 'Create a contact group', body: NameBody, response: { 201: GroupOut } } },
    async (request, reply) => {
      const now = Date.now();
      return reply.code(201).send(groupOut(await saveGroup(request.auth.accountId, newId('grp'), request.body.name.trim(), now)));
    },
  );

  app.get(
    '/contact-groups',
    {
      config: read,
      schema: { tags, summary: 'The contact groups of the account, newest first', querystring: Page, response: { 200: Type.Object({ data: Type.Array(GroupOut), next_cursor: NextCursor }) } },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const rows = await contactGroups(pool, request.auth.accountId, { limit: limit + 1, after: cursor === undefined ? undefined : decodeCursor(cursor) });
      const page = paginate(rows, limit, (row) => ({ at: row.created_at, id: row.group_id }));
      return { data: page.items.map(groupOut), next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/contact-groups/:id',
    { config: read, schema: { tags, summary: 'One contact group', params: GroupParams, response: { 200: GroupOut } } },
    async (request) => groupOut(await groupOf(request.auth.accountId, request.params.id)),
  );

  app.patch(
    '/contact-groups/:id',
    { config: write, schema: { tags, summary: 'Rename a contact group', params: GroupParams, body: NameBody, response: { 200: GroupOut } } },
    async (request) => {
      const { accountId } = request.auth;
      const group = await groupOf(accountId, request.params.id);
      return groupOut(await saveGroup(accountId, group.group_id, request.body.name.trim(), group.created_at.getTime()));
    },
  );

  app.delete(
    '/contact-groups/:id',
    { config: write, schema: { tags, summary: 'Delete a contact group (its contacts stay)', params: GroupParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const { accountId } = request.auth;
      const group = await groupOf(accountId, request.params.id);
      const at = Date.now();
      // The memberships first: none is left behind on the log, to come back in a replay.
      const members = (await memberIds(pool, accountId, group.group_id)).map((contactId) => audienceRecord(accountId, groupMemberId(group.group_id, contactId), null, at));
      await writeAudience(producer, [...members, audienceRecord(accountId, group.group_id, null, at)], async () => (await contactGroup(pool, accountId, group.group_id)) === undefined);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/contact-groups/:id/members',
    {
      config: read,
      schema: {
        tags,
        summary: 'The contacts of a group, most recently added first',
        params: GroupParams,
        querystring: Page,
        response: { 200: Type.Object({ data: Type.Array(MemberOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { accountId } = request.auth;
      const group = await groupOf(accountId, request.params.id);
      const { limit, cursor } = request.query;
      const rows = await groupMembers(pool, accountId, group.group_id, { limit: limit + 1, after: cursor === undefined ? undefined : decodeCursor(cursor) });
      const page = paginate(rows, limit, (row) => ({ at: row.added_at, id: row.contact_id }));
      return { data: page.items.map(memberOut), next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/contact-groups/:id/members',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add contacts to a group; contacts already in it stay as they are',
        params: GroupParams,
        body: Type.Object(
          { contact_ids: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: MAX_ADD, description: 'Every id must be a contact of the account, else 404 not_found and nothing is added' }) },
          { additionalProperties: false },
        ),
        response: { 200: GroupOut },
      },
    },
    async (request) => {
      const { accountId } = request.auth;
      const group = await groupOf(accountId, request.params.id);
      const wanted = [...new Set(request.body.contact_ids)];
      const known = await knownContactIds(pool, accountId, wanted);
      if (known.length < wanted.length) throw gatewayError('not_found');
      const present = new Set(await memberIds(pool, accountId, group.group_id, wanted));
      const added = wanted.filter((contactId) => !present.has(contactId));
      const at = Date.now();
      const records = added.map((contactId) => audienceRecord(accountId, groupMemberId(group.group_id, contactId), { kind: 'group_member', group_id: group.group_id, contact_id: contactId, added_at: at }, at));
      if (records.length > 0) await writeAudience(producer, records, async () => (await memberIds(pool, accountId, group.group_id, added)).length === added.length);
      return groupOut(await groupOf(accountId, group.group_id));
    },
  );

  app.delete(
    '/contact-groups/:id/members/:contact_id',
    { config: write, schema: { tags, summary: 'Take a contact out of a group (the contact stays)', params: MemberParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const { accountId } = request.auth;
      const group = await groupOf(accountId, request.params.id);
      const contactId = request.params.contact_id;
      if ((await memberIds(pool, accountId, group.group_id, [contactId])).length === 0) throw gatewayError('not_found');
      await writeAudience(producer, [audienceRecord(accountId, groupMemberId(group.group_id, contactId), null, Date.now())], async () =>
        (await memberIds(pool, accountId, group.group_id, [contactId])).length === 0,
      );
      return reply.code(204).send(null);
    },
  );
};
