import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { asEventId, newId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics } from '../../topics/index.js';
import { WRITE_DEADLINE_MS, writeConfig } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { isEmailAddress } from '../../shared/email-address.js';
import { deleteInstances } from '../instances/delete.js';
import { projectInstances } from '../instances/queries.js';

const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const UserOut = Type.Object({ id: Type.String(), email: Type.String(), role: Type.String(), name: Type.Union([Type.String(), Type.Null()]) });
const ProjectOut = Type.Object({ id: Type.String(), name: Type.String(), is_default: Type.Boolean() });
const config = { partnerKeys: false };

/**
 * The people and projects of an account, and the end of an account (owner and admin keys; the
 * account's deletion takes an owner key). A deleted project or account is a tombstone of it and of
 * everything under it on `gw.config`, and its numbers are removed (their sessions closed); the
 * sweeper revokes the partner connections that used them.
 */
export const accountRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory } = ctx;
  const requireAdmin = (request: FastifyRequest) => {
    if (request.auth.role === 'agent') throw gatewayError('forbidden');
  };
  const record = (request: FastifyRequest, entityId: string, entity: ConfigRecord['entity'], projectId: string | null = null): ConfigRecord => ({
    event_id: asEventId(newId('cfg')),
    occurred_at: ctx.clock(),
    account_id: request.auth.accountId,
    project_id: projectId as ConfigRecord['project_id'],
    instance_id: null,
    entity_id: entityId,
    entity,
  });
  /** Tombstones, written together; resolves once this process has applied them. */
  const remove = async (ids: readonly string[]) => {
    await withDeadline(ctx.clients.producer.send(topics.config, ids.map((key) => ({ key, value: null }))), WRITE_DEADLINE_MS);
    await Promise.all(ids.map((id) => directory.applied(id, null, WRITE_DEADLINE_MS)));
  };
  const underProject = (projectId: string) => [
    ...[...directory.keysOf(directory.projects.get(projectId)?.account_id ?? '')].filter((k) => k.project_id === projectId).map((k) => k.id),
    ...directory.webhooksOf(projectId).map((w) => w.id),
    ...directory.poolsOf(projectId).map((p) => p.id),
  ];

  app.get('/users', { config, schema: { tags: ['account'], summary: 'People of the account', response: { 200: Type.Object({ data: Type.Array(UserOut) }) } } }, async (request) => {
    requireAdmin(request);
    return { data: directory.usersOf(request.auth.accountId).map(({ id, email, role, name }) => ({ id, email, role, name })) };
  });

  app.post(
    '/users',
    {
      config,
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
      const email = request.body.email.trim().toLowerCase();
      if (!isEmailAddress(email)) throw gatewayError('invalid_request', { detail: 'body/email: an e-mail address' });
      if (directory.usersOf(request.auth.accountId).some((u) => u.email === email)) throw gatewayError('invalid_request', { detail: `body/email: ${email} is already a user of the account` });
      const id = newId('usr');
      await writeConfig(ctx, id, record(request, id, { kind: 'user', email, role: request.body.role, name: request.body.name ?? null }));
      return reply.code(201).send({ id, email, role: request.body.role, name: request.body.name ?? null });
    },
  );

  app.delete('/users/:id', { config, schema: { tags: ['account'], summary: 'Remove a person', params: Params, response: { 204: Type.Null() } } }, async (request, reply) => {
    requireAdmin(request);
    if (directory.users.get(request.params.id)?.account_id !== request.auth.accountId) throw gatewayError('not_found');
    await remove([request.params.id]);
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
      const id = newId('prj');
      await writeConfig(ctx, id, record(request, id, { kind: 'project', name: request.body.name, is_default: false }, id));
      return reply.code(201).send({ id, name: request.body.name, is_default: false });
    },
  );

  app.delete(
    '/projects/:id',
    { config, schema: { tags: ['account'], summary: 'Delete a project with its keys, webhooks and pools (not the default project)', params: Params, response: { 204: Type.Null() } } },
    async (request, reply) => {
      requireAdmin(request);
      const project = directory.projects.get(request.params.id);
      if (project === undefined || project.account_id !== request.auth.accountId) throw gatewayError('not_found');
      if (project.is_default) throw gatewayError('invalid_request', { detail: 'the default project goes only with the account (DELETE /account)' });
      await remove([...underProject(project.id), project.id]);
      await deleteInstances(ctx.clients.producer, await projectInstances(ctx.clients.pool, project.id));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/account',
    { config, schema: { tags: ['account'], summary: 'Delete the account with its projects, people, keys, webhooks and pools (owner keys only)', response: { 204: Type.Null() } } },
    async (request, reply) => {
      if (request.auth.role !== 'owner') throw gatewayError('forbidden');
      const { accountId } = request.auth;
      const projects = [...directory.projects.values()].filter((p) => p.account_id === accountId);
      const ids = [
        ...projects.flatMap((p) => underProject(p.id)),
        ...directory.keysOf(accountId).map((k) => k.id),
        ...directory.usersOf(accountId).map((u) => u.id),
        ...projects.map((p) => p.id),
        accountId,
      ];
      await remove([...new Set(ids)]);
      for (const project of projects) await deleteInstances(ctx.clients.producer, await projectInstances(ctx.clients.pool, project.id));
      return reply.code(204).send(null);
    },
  );
};
