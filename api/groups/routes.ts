import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { QueryRefused, type NumberAsker, type SessionQuery, type AnswerOf } from '../../connectors/network/index.js';
import { asAccountId, asInstanceId, asProjectId } from '../../schemas/ids.js';
import { anyOf, toJid } from '../../schemas/phones.js';
import type { GroupInfo } from '../../schemas/records.js';
import { refusal } from '../contacts/network-checks.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { projectInstance, projectInstances } from '../../processors/instances/queries.js';

export interface GroupRouteOptions extends RouteOptions {
  /** Asks a number's live session (the query channel). */
  readonly asker: Pick<NumberAsker, 'ask'>;
  /** The number that last talked in a chat of the project (a group jid here). */
  readonly lastInstanceFor: (projectId: string, jid: string) => Promise<string | null>;
}

/** How long a number is given to answer. */
const ASK_TIMEOUT_MS = 15_000;
const LIVE = new Set(['connected', 'warming']);

const GroupJid = Type.String({ pattern: anyOf('groupJid'), description: 'Group jid (…@g.us), URL-encoded' });
const Person = Type.String({ pattern: anyOf('e164', 'phoneJid', 'lid'), description: 'E.164 phone or jid' });
const People = Type.Array(Person, { minItems: 1, maxItems: 256, uniqueItems: true });
const InstanceQuery = Type.Object({ instance_id: Type.Optional(Type.String({ maxLength: 100, description: 'The number to ask; default: the group’s conversation number, else a connected number of the project' })) }, { additionalProperties: false });
const Role = Type.Union([Type.Literal('member'), Type.Literal('admin'), Type.Literal('superadmin')]);

export const GroupOut = Type.Object({
  jid: Type.String(),
  subject: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  owner: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  size: Type.Integer(),
  participants: Type.Optional(Type.Array(Type.Object({ jid: Type.String(), lid: Type.Optional(Type.String()), role: Role }))),
});

/**
 * `/groups` (spec 4.3 names it): the groups of a number, read and changed on the network through
 * the number's live session (the query channel of `POST /contacts/check`). Sends to a group are
 * the send routes with a group jid as `to`.
 */
export const groupRoutes: FastifyPluginAsyncTypebox<GroupRouteOptions> = async (app, options) => {
  const { pool } = options.ctx.clients;

  /** The number to ask: the one named, else the group's conversation number, else a connected one. */
  const numberFor = async (projectId: string, instanceId: string | undefined, group?: string) => {
    if (instanceId !== undefined) {
      const named = await projectInstance(pool, projectId, instanceId);
      if (named === undefined) throw gatewayError('not_found');
      return named;
    }
    const numbers = (await projectInstances(pool, projectId)).filter((n) => LIVE.has(n.status));
    const last = group === undefined ? null : await options.lastInstanceFor(projectId, group);
    const chosen = numbers.find((n) => n.instance_id === last) ?? numbers[0];
    if (chosen === undefined) throw gatewayError('not_connected');
    return chosen;
  };

  const ask = async <Q extends SessionQuery>(projectId: string, instanceId: string | undefined, query: Q, group?: string): Promise<AnswerOf<Q>> => {
    const number = await numberFor(projectId, instanceId, group);
    const asked = { account_id: asAccountId(number.account_id), project_id: asProjectId(number.project_id), instance_id: asInstanceId(number.instance_id) };
    try {
      return await options.asker.ask(asked, query, ASK_TIMEOUT_MS);
    } catch (error) {
      throw error instanceof QueryRefused ? refusal(error) : error;
    }
  };

  app.get(
    '/groups',
    {
      config: { scope: 'groups:read' },
      schema: {
        tags: ['groups'],
        summary: 'The groups a number takes part in',
        querystring: Type.Object({ ...InstanceQuery.properties, participants: Type.Optional(Type.Boolean({ description: 'With each group’s participants' })) }, { additionalProperties: false }),
        response: { 200: Type.Object({ data: Type.Array(GroupOut) }) },
      },
    },
    async (request) => {
      const { groups } = await ask(request.auth.projectId, request.query.instance_id, { kind: 'list_groups', with_participants: request.query.participants ?? false });
      return { data: groups.map((g) => groupOut(g, request.query.participants ?? false)) };
    },
  );

  app.get(
    '/groups/:jid',
    {
      config: { scope: 'groups:read' },
      schema: { tags: ['groups'], summary: 'A group: subject, description, participants', params: Type.Object({ jid: GroupJid }), querystring: InstanceQuery, response: { 200: GroupOut } },
    },
    async (request) => groupOut(await ask(request.auth.projectId, request.query.instance_id, { kind: 'group_metadata', group_jid: request.params.jid }, request.params.jid), true),
  );

  app.post(
    '/groups',
    {
      config: { scope: 'groups:write' },
      schema: {
        tags: ['groups'],
        summary: 'Create a group with these people; the number becomes its super admin',
        body: Type.Object({ subject: Type.String({ minLength: 1, maxLength: 100 }), participants: People, instance_id: InstanceQuery.properties.instance_id }, { additionalProperties: false }),
        response: { 201: GroupOut },
      },
    },
    async (request, reply) => {
      const { subject, participants, instance_id } = request.body;
      const created = await ask(request.auth.projectId, instance_id, { kind: 'create_group', subject, participants: participants.map(toJid) });
      return reply.code(201).send(groupOut(created, true));
    },
  );

  app.post(
    '/groups/:jid/participants',
    {
      config: { scope: 'groups:write' },
      schema: {
        tags: ['groups'],
        summary: 'Add, remove, promote or demote participants (the number must be an admin)',
        params: Type.Object({ jid: GroupJid }),
        body: Type.Object(
          {
            action: Type.Union([Type.Literal('add'), Type.Literal('remove'), Type.Literal('promote'), Type.Literal('demote')]),
            participants: People,
            instance_id: InstanceQuery.properties.instance_id,
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(Type.Object({ jid: Type.String(), status: Type.String({ description: 'ok, or why not: not_found, conflict, forbidden…' }) })) }) },
      },
    },
    async (request) => {
      const { action, participants, instance_id } = request.body;
      const group = request.params.jid;
      const { results } = await ask(request.auth.projectId, instance_id, { kind: 'update_participants', group_jid: group, action, participants: participants.map(toJid) }, group);
      return { data: results.map(({ jid, status }) => ({ jid, status })) };
    },
  );

  app.get(
    '/groups/:jid/invite',
    {
      config: { scope: 'groups:write' },
      schema: {
        tags: ['groups'],
        summary: 'The invite link of a group (the number must be an admin)',
        params: Type.Object({ jid: GroupJid }),
        querystring: InstanceQuery,
        response: { 200: Type.Object({ code: Type.String(), link: Type.String() }) },
      },
    },
    async (request) => {
      const { code, link } = await ask(request.auth.projectId, request.query.instance_id, { kind: 'group_invite', group_jid: request.params.jid }, request.params.jid);
      return { code, link };
    },
  );
};

function groupOut(group: GroupInfo, withParticipants: boolean): Static<typeof GroupOut> {
  return {
    jid: group.jid,
    subject: group.subject,
    description: group.description,
    owner: group.owner,
    created_at: group.created_at === null ? null : new Date(group.created_at).toISOString(),
    size: group.size,
    ...(withParticipants && { participants: group.participants.map((p) => ({ jid: p.jid, ...(p.lid !== null && { lid: p.lid }), role: p.role })) }),
  };
}
