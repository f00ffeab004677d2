import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  attemptsOf,
  deliveryById,
  listDeliveries,
  type AttemptRow,
  type DeliveryRow,
} from '../../processors/deliveries/index.js';
import { retrySchedule } from '../../connectors/webhooks/schedule.js';
import type { RouteOptions } from '../context.js';
import { Cursor, decodeCursor, Limit, NextCursor, paginate } from '../conversations/cursor.js';
import { gatewayError } from '../errors.js';
import { queueRedelivery } from './redelivery.js';
import { ownWebhook, readAccess as read, writeAccess as write } from './reach.js';
import { DeliveryDetailOut, DeliveryOut, DeliveryStatus, WebhookParams } from './schemas.js';

const DeliveryParams = Type.Composite([WebhookParams, Type.Object({ delivery_id: Type.String({ maxLength: 100 }) })]);

const iso = (at: Date | null) => (at === null ? null : at.toISOString());

export function deliveryOut(row: DeliveryRow) {
  return {
    id: row.delivery_id,
    event_id: row.event_id,
    event_type: row.event_type,
    trigger: row.trigger,
    status: row.status,
    attempt_count: row.attempts,
    last_attempt_at: row.last_attempt_at.toISOString(),
    last_response_status: row.last_response_status,
    last_error: row.last_error,
    last_response_excerpt: row.last_response_excerpt,
    next_attempt_at: iso(row.next_attempt_at),
    created_at: row.created_at.toISOString(),
  };
}

function attemptOut(row: AttemptRow) {
  return {
    id: row.attempt_id,
    attempt: row.attempt,
    timestamp: row.occurred_at.toISOString(),
    url: row.url,
    outcome: row.outcome,
    response_status: row.response_status,
    response_excerpt: row.response_body_excerpt,
    error: row.error,
    duration_ms: row.duration_ms,
    next_attempt_at: iso(row.next_attempt_at),
  };
}

/**
 * The delivery history of a webhook, read from the `deliveries` projection of
 * `gw.deliveries.attempts`, and redelivery by hand: like svix's resend, the API makes no HTTP call;
 * it queues a `manual` task on the first retry tier, which the dispatcher takes like any other.
 */
export const deliveryRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory, clients } = ctx;
  const firstTier = retrySchedule(clients.config.webhooks.retryDelaysMs).retries[0].tier;

  const ownDelivery = async (projectId: string, webhookId: string, deliveryId: string) => {
    const webhook = ownWebhook(directory, projectId, webhookId);
    const delivery = await deliveryById(clients.pool, webhook.id, deliveryId);
    if (!delivery) throw gatewayError('not_found');
    return { webhook, delivery };
  };

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: read,
      schema: {
        tags: ['webhooks'],
        summary: "A webhook's deliveries, newest first",
        params: WebhookParams,
        querystring: Type.Object({ status: Type.Optional(DeliveryStatus), limit: Limit, cursor: Type.Optional(Cursor) }),
        response: { 200: Type.Object({ data: Type.Array(DeliveryOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const webhook = ownWebhook(directory, request.auth.projectId, request.params.id);
      const { status, limit, cursor } = request.query;
      const rows = await listDeliveries(clients.pool, webhook.id, status, {
        limit: limit + 1,
        after: cursor === undefined ? undefined : decodeCursor(cursor),
      });
      const page = paginate(rows, limit, (row) => ({ at: row.created_at, id: row.delivery_id }));
      return { data: page.items.map(deliveryOut), next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/webhooks/:id/deliveries/:delivery_id',
    {
      config: read,
      schema: {
        tags: ['webhooks'],
        summary: 'A delivery with its attempts and the body posted',
        params: DeliveryParams,
        response: { 200: DeliveryDetailOut },
      },
    },
    async (request) => {
      const { delivery } = await ownDelivery(request.auth.projectId, request.params.id, request.params.delivery_id);
      const attempts = await attemptsOf(clients.pool, delivery.delivery_id);
      return {
        ...deliveryOut(delivery),
        body: delivery.body_json === null ? null : (JSON.parse(delivery.body_json) as unknown),
        attempts: attempts.map(attemptOut),
      };
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        summary: 'Deliver the same event again, as a new delivery with its own retries',
        params: DeliveryParams,
        response: { 202: Type.Object({ delivery_id: Type.String({ description: 'The new delivery' }) }) },
      },
    },
    async (request, reply) => {
      const { webhook, delivery } = await ownDelivery(request.auth.projectId, request.params.id, request.params.delivery_id);
      const deliveryId = await queueRedelivery({ producer: clients.producer, firstTier }, delivery, { kind: 'account_webhook', id: webhook.id });
      return reply.code(202).send({ delivery_id: deliveryId });
    },
  );
};
