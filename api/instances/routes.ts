import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { anyOf } from '../../schemas/phones.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { planNamed } from '../../processors/usage/plans.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import { withDeadline } from '../../shared/deadline.js';
import { createInstance } from '../../processors/instances/create.js';
import { projectInstance, projectInstances, untilProjected, untilRead, type InstanceRow } from '../../processors/instances/queries.js';
import { deleteInstances } from '../../processors/instances/delete.js';
import { renameInstance } from '../../processors/instances/rename.js';
import { requestOfNumber } from './pairing.js';
import { Country, requestCountry, requestPhone } from '../phone-input.js';

/** Spec 2.3, with the fields the spec leaves open. */
export const InstanceOut = Type.Object({
  id: Type.String({ description: 'Value used as instance_id in targeted sends' }),
  phone: Type.Union([Type.String(), Type.Null()], { description: 'E.164 phone of the number, once paired' }),
  nickname: Type.Union([Type.String(), Type.Null()]),
  status: Type.String({ description: 'pending, connecting, connected, warming, disconnected, logged_out or banned' }),
  health_score: Type.Integer({ minimum: 0, maximum: 100 }),
  pool_ids: Type.Array(Type.String()),
  connector: Type.String({ description: 'sandbox or baileys' }),
  status_changed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  updated_at: Type.String({ format: 'date-time' }),
});

export function instanceOut(row: InstanceRow) {
  return {
    id: row.instance_id,
    phone: row.phone,
    nickname: row.nickname,
    status: row.status,
    health_score: row.health_score,
    pool_ids: row.pool_ids,
    connector: row.connector,
    status_changed_at: row.status_changed_at?.toISOString() ?? null,
    updated_at: row.updated_at.toISOString(),
  };
}

const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const Accepted = Type.Object({ id: Type.String(), accepted: Type.Literal(true) });
const PairBody = Type.Object(
  {
    method: Type.Optional(Type.Union([Type.Literal('qr'), Type.Literal('code')], { description: 'qr (default) or a pairing code to type on the phone' })),
    phone: Type.Optional(Type.String({ pattern: anyOf('written'), description: 'Phone of the number, E.164 or as written (a national one is read in country); needed for a pairing code' })),
    country: Type.Optional(Country),
  },
  { additionalProperties: false, examples: [{ method: 'code', phone: '+5511999998888' }] },
);

/** The project's numbers (spec 4.3 `GET /instances`), and adding or removing one. */
export const instanceRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { pool, producer } = ctx.clients;

  app.get(
    '/instances',
    {
      config: { scope: 'instances:read' },
      schema: {
        tags: ['instances'],
        summary: "List the project's numbers",
        // Partner keys may pass project_id=all: they still see only their connection's project.
        querystring: Type.Object({ project_id: Type.Optional(Type.String({ maxLength: 100 })) }),
        response: { 200: Type.Object({ data: Type.Array(InstanceOut) }) },
      },
    },
    async (request) => ({ data: (await projectInstances(pool, request.auth.projectId)).map(instanceOut) }),
  );

  app.post(
    '/instances',
    {
      config: { scope: 'instances:write' },
      schema: {
        tags: ['instances'],
        summary: "Add a number; it is pending until paired (402 quota_exceeded past the plan's numbers)",
        body: Type.Object(
          {
            nickname: Type.Optional(Type.String({ maxLength: 100 })),
            connector: Type.Optional(Type.Union([Type.Literal('sandbox'), Type.Literal('baileys')])),
          },
          { additionalProperties: false },
        ),
        response: { 202: Type.Object({ id: Type.String(), status: Type.Literal('pending') }) },
      },
    },
    async (request, reply) => {
      const connector = request.body.connector ?? ctx.clients.config.defaultConnector;
      if (connector === 'sandbox' && ctx.clients.config.mode !== 'development') {
        throw gatewayError('invalid_request', { detail: 'connector: the sandbox network runs in development mode only (GATEWAY_MODE=development)' });
      }
      const allowed = planNamed(request.auth.plan).numbers;
      if ((await projectInstances(pool, request.auth.projectId)).length >= allowed) throw gatewayError('quota_exceeded');
      const state = await withDeadline(
        createInstance(producer, {
          accountId: request.auth.accountId,
          projectId: request.auth.projectId,
          nickname: request.body.nickname ?? null,
          connector,
        }),
        WRITE_DEADLINE_MS,
      );
      // A GET /instances (or a pairing) right after the answer already sees the number.
      await untilProjected(pool, request.auth.projectId, state.instance_id, WRITE_DEADLINE_MS);
      return reply.code(202).send({ id: state.instance_id, status: 'pending' as const });
    },
  );

  app.post(
    '/instances/:id/connect',
    {
      config: { scope: 'instances:write' },
      schema: {
        tags: ['instances'],
        summary: 'Pair a number: its QR payloads, or its pairing code, arrive on GET /stream as qr_code / pairing_code',
        params: Params,
        body: Type.Optional(PairBody),
        response: { 202: Accepted },
      },
    },
    async (request, reply) => {
      const row = await projectInstance(pool, request.auth.projectId, request.params.id);
      if (!row) throw gatewayError('not_found');
      const method = request.body?.method ?? 'qr';
      const written = request.body?.phone;
      const phone = written === undefined ? row.phone : requestPhone(written, requestCountry(ctx.directory, request.auth.accountId, request.body?.country), 'body/phone');
      if (method === 'code' && phone === null && row.connector !== 'sandbox') throw gatewayError('invalid_request', { detail: 'phone: a pairing code needs the number’s phone' });
      await requestOfNumber(producer, row, { kind: 'pair', method, phone });
      return reply.code(202).send({ id: row.instance_id, accepted: true as const });
    },
  );

  app.post(
    '/instances/:id/disconnect',
    {
      config: { scope: 'instances:write', audit: { action: 'number.unlinked', target: 'param' } },
      schema: { tags: ['instances'], summary: 'Unlink a number from the network; it must be paired again', params: Params, response: { 202: Accepted } },
    },
    async (request, reply) => {
      const row = await projectInstance(pool, request.auth.projectId, request.params.id);
      if (!row) throw gatewayError('not_found');
      await requestOfNumber(producer, row, { kind: 'unlink', reason: 'disconnected through the API' });
      return reply.code(202).send({ id: row.instance_id, accepted: true as const });
    },
  );

  app.patch(
    '/instances/:id',
    {
      config: { scope: 'instances:write', audit: { action: 'number.renamed', target: 'param' } },
      schema: {
        tags: ['instances'],
        summary: 'Rename a number: its nickname (spec 2.3), 1 to 100 characters',
        params: Params,
        body: Type.Object(
          { nickname: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }) },
          { additionalProperties: false, examples: [{ nickname: 'Loja centro' }] },
        ),
        response: { 200: InstanceOut },
      },
    },
    async (request) => {
      const row = await projectInstance(pool, request.auth.projectId, request.params.id);
      if (!row) throw gatewayError('not_found');
      const { nickname } = request.body;
      await renameInstance(producer, row, nickname);
      // A GET /instances right after the answer already shows the new nickname.
      const renamed = await untilRead(async () => {
        const now = await projectInstance(pool, request.auth.projectId, row.instance_id);
        return now?.nickname === nickname ? now : undefined;
      }, WRITE_DEADLINE_MS);
      return instanceOut(renamed ?? { ...row, nickname });
    },
  );

  app.delete(
    '/instances/:id',
    {
      config: { scope: 'instances:write', audit: { action: 'number.removed', target: 'param' } },
      schema: { tags: ['instances'], summary: 'Remove a number: its session is closed', params: Params, response: { 202: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) } },
    },
    async (request, reply) => {
      const row = await projectInstance(pool, request.auth.projectId, request.params.id);
      if (!row) throw gatewayError('not_found');
      await deleteInstances(producer, [row]);
      return reply.code(202).send({ id: row.instance_id, deleted: true as const });
    },
  );
};
