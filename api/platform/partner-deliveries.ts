import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { deliveryById, listDeliveries } from '../../processors/deliveries/index.js';
import { retrySchedule } from '../../connectors/webhooks/schedule.js';
import type { RouteOptions } from '../context.js';
import { Cursor, decodeCursor, Limit, NextCursor, paginate } from '../conversations/cursor.js';
import { gatewayError } from '../errors.js';
import { deliveryOut } from '../webhooks/deliveries.js';
import { queueRedelivery } from '../webhooks/redelivery.js';
import { DeliveryOut, DeliveryStatus } from '../webhooks/schemas.js';

const config = { surface: 'platform' as const };
const tags = ['platform'];
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const DeliveryParams = Type.Object({ id: Type.String({ maxLength: 100 }), delivery_id: Type.String({ maxLength: 100 }) });

/**
 * A partner webhook's delivery log (every delivery, with its status, HTTP answer and error), read
 * from the same `deliveries` projection as an account webhook's, and redelivery by hand.
 */
export const partnerDeliveryRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory, clients } = ctx;
  const firstTier = retrySchedule(clients.config.webhooks.retryDelaysMs).retries[0].tier;
  const partnerId = (id: string) => {
    if (!directory.partners.has(id)) throw gatewayError('not_found');
    return id;
  };

  app.get(
    '/platform/partners/:id/deliveries',
    {
      config,
      schema: {
        tags,
        summary: "The partner webhook's deliveries, newest first",
        params: Params,
        querystring: Type.Object({ status: Type.Optional(DeliveryStatus), limit: Limit, cursor: Type.Optional(Cursor) }),
        response: { 200: Type.Object({ data: Type.Array(DeliveryOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { status, limit, cursor } = request.query;
      const rows = await listDeliveries(clients.pool, partnerId(request.params.id), status, { limit: limit + 1, after: cursor === undefined ? undefined : decodeCursor(cursor) });
      const page = paginate(rows, limit, (row) => ({ at: row.created_at, id: row.delivery_id }));
      return { data: page.items.map(deliveryOut), next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/platform/partners/:id/deliveries/:delivery_id/redeliver',
    {
      config,
      schema: {
        tags,
        summary: 'Deliver the same event to the partner again, as a new delivery with its own retries',
        params: DeliveryParams,
        response: { 202: Type.Object({ delivery_id: Type.String({ description: 'The new delivery' }) }) },
      },
    },
    async (request, reply) => {
      const id = partnerId(request.params.id);
      const delivery = await deliveryById(clients.pool, id, request.params.delivery_id);
      if (!delivery) throw gatewayError('not_found');
      return reply.code(202).send({ delivery_id: await queueRedelivery({ producer: clients.producer, firstTier }, delivery, { kind: 'partner_webhook', id }) });
    },
  );
};
