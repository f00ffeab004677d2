import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { asEventId, newId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { addProject, projectsLock } from '../../processors/config/accounts.js';
import { writeConfigChanges, type ConfigChange } from '../../processors/config/write.js';
import { configLockDeps, configWriter, writeConfig } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { isEmailAddress } from '../../shared/email-address.js';
import { deleteInstances } from '../instances/delete.js';
import { changeConfigAlone } from '../config-lock.js';
import { accountRemoval, projectRemoval } from './removal.js';
import { projectInstances } from '../instances/queries.js';

const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const UserOut = Type.Object({ id: Type.String(), email: Type.String(), role: Type.String(), name: Type.Union([Type.String(), Type.Null()]) });
const ProjectOut = Type.Object({ id: Type.String(), name: Type.String(), is_default: Type.Boolean() });
const config = { partnerKeys: false };

/**
 * The people and projects of an account, and the end of an account (owner and admin keys; the
 * account's deletion takes an owner key). An account always has one default project: the one
 * partner connections link (spec 4.5). Another project can be made the default; the default
 * itself goes only with the account. A deleted project or account is a tombstone of it and of
 * everything under it on `gw.config` (removal.ts says which keys outlive it), and its numbers are
 * removed (their sessions closed); the sweeper revokes the partner connections that used them.
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
  /** Writes the changes together; resolves once this process has applied them. */
  const write = (changes: readonly ConfigChange[]) => writeConfigChanges(configWriter(ctx), changes);
  /** Changes of an account's projects (and its deletion) run one at a time, across API processes, on the latest directory. */
  const changeProjects = <T>(request: FastifyRequest, change: () => Promise<T>) => changeConfigAlone(ctx, projectsLock(request.auth.accountId), change);
  const ownProject = (request: FastifyRequest, id: string) => {
    const project = directory.projects.get(id);
    if (project === undefined || project.account_id !== request.auth.accountId) throw gatewayError('not_found');
    return project;
  };

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
      const email = request.body.email.trim().toLowerCase();
      if (!isEmailAddress(email)) throw gatewayError('invalid_request', { detail: 'body/email: an e-mail address' });
      if (directory.usersOf(request.auth.accountId).some((u) => u.email === email)) throw gatewayError('invalid_request', { detail: `body/email: ${email} is already a user of the account` });
      const id = newId('usr');
      await writeConfig(ctx, id, record(request, id, { kind: 'user', email, role: request.body.role, name: request.body.name ?? null }));
      return reply.code(201).send({ id, email, role: request.body.role, name: request.body.name ?? null });
    },
  );

  app.delete('/users/:id', { config: { ...config, audit: { action: 'user.removed', target: 'param' } }, schema: { tags: ['account'], summary: 'Remove a person', params: Params, response: { 204: Type.Null() } } }, async (request, reply) => {
    requireAdmin(request);
    if (directory.users.get(request.params.id)?.account_id !== request.auth.accountId) throw gatewayError('not_found');
    await write([{ key: request.params.id, value: null }]);
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
      const project = await addProject({ ...configWriter(ctx), ...configLockDeps(ctx) }, { accountId: request.auth.accountId, name: request.body.name, at: ctx.clock() });
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
      return changeProjects(request, async () => {
        const project = ownProject(request, request.params.id);
        const changed = { kind: 'project' as const, name: request.body.name ?? project.name, is_default: request.body.is_default ?? project.is_default };
        const formerDefaults = changed.is_default
          ? [...directory.projects.values()].filter((p) => p.account_id === project.account_id && p.is_default && p.id !== project.id)
          : [];
        // The new default first: a failure between the two writes leaves two defaults (the next change mends it), never none.
        await write([{ key: project.id, value: record(request, project.id, changed, project.id) }]);
        if (formerDefaults.length > 0) {
          await write(formerDefaults.map((p) => ({ key: p.id, value: record(request, p.id, { kind: 'project', name: p.name, is_default: false }, p.id) })));
        }
        return { id: project.id, name: changed.name, is_default: changed.is_default };
      });
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
      const project = await changeProjects(request, async () => {
        const project = ownProject(request, request.params.id);
        const defaultProject = directory.defaultProjectOf(project.account_id);
        if (project.is_default || defaultProject === undefined) {
          throw gatewayError('invalid_request', { detail: 'the default project cannot be deleted: make another project the default first (PATCH /projects/{id} {"is_default": true}), or delete the account' });
        }
        await write(projectRemoval(directory, project, defaultProject.id, ctx.clock()));
        return project;
      });
      await deleteInstances(ctx.clients.producer, await projectInstances(ctx.clients.pool, project.id));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/account',
    { config, schema: { tags: ['account'], summary: 'Delete the account with its projects, people, keys, webhooks, pools and numbers (owner keys only)', response: { 204: Type.Null() } } },
    async (request, reply) => {
      if (request.auth.role !== 'owner') throw gatewayError('forbidden');
      const { accountId } = request.auth;
      const projects = await changeProjects(request, async () => {
        const projects = [...directory.projects.values()].filter((p) => p.account_id === accountId);
        await write(accountRemoval(directory, accountId, ctx.clock()));
        return projects;
      });
      for (const project of projects) await deleteInstances(ctx.clients.producer, await projectInstances(ctx.clients.pool, project.id));
      return reply.code(204).send(null);
    },
  );
};
