import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { addProject, changeProject } from '../../processors/config/accounts.js';
import { removeAccount, removeProject } from '../../processors/config/removal.js';
import { addUser, removeUser } from '../../processors/config/users.js';
import { configLockDeps, configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const UserOut = Type.Object({ id: Type.String(), email: Type.String(), role: Type.String(), name: Type.Union([Type.String(), Type.Null()]) });
const ProjectOut = Type.Object({ id: Type.String(), name: Type.String(), is_default: Type.Boolean() });
const config = { partnerKeys: false };

/**
 * The people and projects of an account, and the end of an account (owner and admin keys; the
 * account's deletion takes an owner key). An account always has one default project: the one
 * partner connections link (spec 4.5). Another project can be made the default; the default
 * itself goes only with the account. A deleted project or account is a tombstone of it and of
 * everything under it on `gw.config` (processors/config/removal.ts says which keys outlive it), and
 * its numbers are removed (their sessions closed); the sweeper revokes the partner connections that
 * used them. The changes are the command writers' of processors/config.
 */
export const accountRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory } = ctx;
  const requireAdmin = (request: FastifyRequest) => {
    if (request.auth.role === 'agent') throw gatewayError('forbidden');
  };
  /** The writer of `gw.config` with what a change made alone and a removal take. */
  const deps = () => ({ ...configWriter(ctx), ...configLockDeps(ctx) });

  app.get('/users', { config, schema: { tags: ['account'], summary: 'People of the account', response: { 200: Type.Object({ data: Type.Array(UserOut) }) } } }, async (request) => {
    requireAdmin(request);
    return { data: directory.usersOf(request.auth.accountId).map(({ id, email, role, name }) => ({ id, email, role, name })) };
  });

  app.post(
    '/users',
    {
      config: { ...config, audit: { action: 'user.added', target: 'answer' } },
      schema: {
        tags: ['account'],
        summary: 'Add a person: admin (may link the account to partners, disconnect apps) or member',
        body: Type.Object(
          { email: Type.String({ maxLength: 254 }), role: Type.Union([Type.Literal('admin'), Type.Literal('member')]), name: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false, examples: [{ email: 'ana@shop.example', role: 'member' }] },
        ),
        response: { 201: UserOut },
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      const { email, role, name } = request.body;
      return reply.code(201).send(await addUser(configWriter(ctx), { accountId: request.auth.accountId, email, role, name: name ?? null, at: ctx.clock() }));
    },
  );

  app.delete('/users/:id', { config: { ...config, audit: { action: 'user.removed', target: 'param' } }, schema: { tags: ['account'], summary: 'Remove a person', params: Params, response: { 204: Type.Null() } } }, async (request, reply) => {
    requireAdmin(request);
    await removeUser(configWriter(ctx), { accountId: request.auth.accountId, userId: request.params.id });
    return reply.code(204).send(null);
  });

  app.get('/projects', { config, schema: { tags: ['account'], summary: 'Projects of the account', response: { 200: Type.Object({ data: Type.Array(ProjectOut) }) } } }, async (request) => {
    requireAdmin(request);
    return { data: [...directory.projects.values()].filter((p) => p.account_id === request.auth.accountId).map(({ id, name, is_default }) => ({ id, name, is_default })) };
  });

  app.post(
    '/projects',
    {
      config,
      schema: {
        tags: ['account'],
        summary: 'Add a project',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false, examples: [{ name: 'Second store' }] }),
        response: { 201: ProjectOut },
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      const project = await addProject(deps(), { accountId: request.auth.accountId, name: request.body.name, at: ctx.clock() });
      return reply.code(201).send(project);
    },
  );

  app.patch(
    '/projects/:id',
    {
      config,
      schema: {
        tags: ['account'],
        summary: "Rename a project, or make it the account's default project: the one new partner connections link",
        params: Params,
        body: Type.Object(
          { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), is_default: Type.Optional(Type.Literal(true)) },
          { additionalProperties: false, minProperties: 1, examples: [{ is_default: true }] },
        ),
        response: { 200: ProjectOut },
      },
    },
    async (request) => {
      requireAdmin(request);
      const { name, is_default } = request.body;
      return changeProject(deps(), { accountId: request.auth.accountId, projectId: request.params.id, name, isDefault: is_default, at: ctx.clock() });
    },
  );

  app.delete(
    '/projects/:id',
    {
      config,
      schema: {
        tags: ['account'],
        summary: 'Delete a project with its keys, webhooks, pools and numbers (not the default project); its partner connections are revoked',
        params: Params,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      await removeProject(deps(), { accountId: request.auth.accountId, projectId: request.params.id, at: ctx.clock() });
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/account',
    { config, schema: { tags: ['account'], summary: 'Delete the account with its projects, people, keys, webhooks, pools and numbers (owner keys only)', response: { 204: Type.Null() } } },
    async (request, reply) => {
      if (request.auth.role !== 'owner') throw gatewayError('forbidden');
      await removeAccount(deps(), { accountId: request.auth.accountId, at: ctx.clock() });
      return reply.code(204).send(null);
    },
  );
};
