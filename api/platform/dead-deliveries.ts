import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { listDeadDeliveries, redeliverDead, UnknownDeadDeliveries, type DeadDelivery, type DeadSelection } from '../../connectors/webhooks/dead-deliveries.js';
import { retrySchedules } from '../../connectors/webhooks/index.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

const config = { surface: 'platform' as const };
const tags = ['platform'];
const Endpoint = Type.String({ maxLength: 100, pattern: '^(wh|ptn)_[A-Za-z0-9_-]+$', description: 'A webhook id (wh_…) or a partner id (ptn_…)' });

const DeadDeliveryOut = Type.Object({
  delivery_id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  target_kind: Type.String({ description: 'account_webhook, or partner_webhook' }),
  target_id: Type.String({ description: 'The webhook id, or the partner id of a partner webhook' }),
  attempts: Type.Integer({ description: 'Attempts made before it was given up on' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  dead_at: Type.String({ format: 'date-time', description: 'When it was given up on' }),
});

function deadOut(d: DeadDelivery) {
  const { at, ...rest } = d;
  return { ...rest, dead_at: new Date(at).toISOString() };
}

/**
 * Deliveries given up on (`gw.deliveries.dead`), of every account webhook and partner webhook, as
 * `gateway dead-letters --deliveries` shows them to an operator: listed newest last, and sent again
 * by id or by endpoint, each once per request, as a new delivery with its own retries.
 */
export const deadDeliveryRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { clients } = ctx;
  const schedules = retrySchedules(clients.config.webhooks.retryDelaysMs);

  app.get(
    '/platform/dead-deliveries',
    {
      config,
      schema: {
        tags,
        summary: 'Deliveries given up on, of every webhook and partner, oldest first (the last `limit`)',
        querystring: Type.Object({
          endpoint: Type.Optional(Endpoint),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
        }),
        response: { 200: Type.Object({ data: Type.Array(DeadDeliveryOut) }) },
      },
    },
    async (request) => {
      const dead = await listDeadDeliveries(clients, { limit: request.query.limit ?? 100, targetId: request.query.endpoint });
      return { data: dead.map(deadOut) };
    },
  );

  app.post(
    '/platform/dead-deliveries/redeliver',
    {
      config,
      schema: {
        tags,
        summary: 'Send dead deliveries again, by id or every one of an endpoint: each once, as a new delivery with its own retries',
        body: Type.Union(
          [
            Type.Object({ delivery_ids: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 500, uniqueItems: true }) }, { additionalProperties: false }),
            Type.Object({ endpoint: Endpoint }, { additionalProperties: false }),
          ],
          { examples: [{ delivery_ids: ['dlv_…'] }, { endpoint: 'ptn_…' }] },
        ),
        response: { 202: Type.Object({ data: Type.Array(DeadDeliveryOut, { description: 'The dead deliveries sent again' }) }) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const selection: DeadSelection = 'delivery_ids' in body ? { kind: 'ids', ids: body.delivery_ids } : { kind: 'endpoint', targetId: body.endpoint };
      const sent = await redeliverDead({ ...clients, schedules }, selection).catch((error: unknown) => {
        if (error instanceof UnknownDeadDeliveries) throw gatewayError('not_found', { detail: `${error.message}; nothing was sent` });
        throw error;
      });
      return reply.code(202).send({ data: sent.map(deadOut) });
    },
  );
};
