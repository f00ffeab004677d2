import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { newId } from '../../schemas/ids.js';
import { poolOf, removePool, writePool } from '../../processors/config/pools.js';
import { configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import type { PoolEntry } from '../../processors/directory.js';
import { gatewayError } from '../errors.js';
import { projectInstances } from '../../processors/instances/queries.js';

const PoolOut = Type.Object({ id: Type.String(), name: Type.String(), instance_ids: Type.Array(Type.String()) });
const PoolIn = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    instance_ids: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 500, uniqueItems: true }),
  },
  { additionalProperties: false },
);
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const poolOut = (p: PoolEntry) => ({ id: p.id, name: p.name, instance_ids: [...p.instance_ids] });

/** Pools: named sets of the project's numbers that a send can narrow its choice to (`pool_id`). */
export const poolRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory, clients } = ctx;
  const write = { scope: 'pools:write' as const };

  const writer = configWriter(ctx);
  const checkNumbers = async (projectId: string, ids: readonly string[]) => {
    const known = new Set((await projectInstances(clients.pool, projectId)).map((i) => i.instance_id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) throw gatewayError('invalid_request', { detail: `unknown instance_ids: ${unknown.join(', ')}` });
  };

  app.get('/pools', { config: { scope: 'instances:read' }, schema: { tags: ['pools'], summary: "List the project's pools", response: { 200: Type.Object({ data: Type.Array(PoolOut) }) } } },
    async (request) => ({ data: directory.poolsOf(request.auth.projectId).map(poolOut) }));

  app.post('/pools', { config: write, schema: { tags: ['pools'], summary: 'Create a pool', body: PoolIn, response: { 201: PoolOut } } }, async (request, reply) => {
    await checkNumbers(request.auth.projectId, request.body.instance_ids);
    return reply.code(201).send(poolOut(await writePool(writer, request.auth, newId('pool'), request.body)));
  });

  app.put('/pools/:id', { config: write, schema: { tags: ['pools'], summary: 'Replace a pool', params: Params, body: PoolIn, response: { 200: PoolOut } } }, async (request) => {
    poolOf(writer, request.auth.projectId, request.params.id);
    await checkNumbers(request.auth.projectId, request.body.instance_ids);
    return poolOut(await writePool(writer, request.auth, request.params.id, request.body));
  });

  app.delete('/pools/:id', { config: write, schema: { tags: ['pools'], summary: 'Delete a pool', params: Params, response: { 204: Type.Null() } } }, async (request, reply) => {
    await removePool(writer, request.auth, request.params.id);
    return reply.code(204).send(null);
  });
};
