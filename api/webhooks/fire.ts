import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { isStreamOnly, isWebhookEventType, listensTo, type WebhookEventType } from '../../events/catalogue.js';
import { publishEvents } from '../../events/publish.js';
import { sampleEvent, type SampleOwner } from '../../events/samples.js';
import type { PublicEvent } from '../../schemas/records.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { withDeadline } from '../../shared/deadline.js';
import { gatewayError } from '../errors.js';
import { projectInstances } from '../../processors/instances/queries.js';
import { ownWebhook, writeAccess as write } from './reach.js';
import { EventChoice, FiredEvent, WebhookParams } from './schemas.js';

/** A name a sample can be made of: a webhook event; stream-only and unknown names are 400. */
function webhookEvent(name: string): WebhookEventType {
  if (isWebhookEventType(name)) return name;
  const why = isStreamOnly(name) ? 'is delivered only on the stream (GET /stream), never to webhooks' : 'is not a webhook event';
  throw gatewayError('invalid_request', { detail: `event_type "${name}" ${why}` });
}

/**
 * Sample events (spec 4.3): the API writes a `test` or `manual` sample to `gw.events` like any
 * other event, under the same key (the project, or the account for an account event); the
 * dispatcher signs and delivers it (a test event only to its one webhook, one attempt).
 */
export const fireRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory, clients } = ctx;

  // Samples name one of the project's numbers when it has any.
  const ownerOf = async (auth: { accountId: string; projectId: string }): Promise<SampleOwner> => {
    const numbers = await projectInstances(clients.pool, auth.projectId);
    return { accountId: auth.accountId, projectId: auth.projectId, instanceId: numbers[0]?.instance_id };
  };
  const publish = (event: PublicEvent) => withDeadline(publishEvents(clients.producer, [event]), WRITE_DEADLINE_MS);

  app.post(
    '/webhooks/:id/test',
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        summary: 'Send a sample event, really signed, to this webhook only',
        description: "Body optional. event_type defaults to the webhook's first event, or message.received when it listens to all.",
        params: WebhookParams,
        body: EventChoice,
        response: { 202: FiredEvent },
      },
      // The body is optional: a bare POST reads as {}.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { auth, params, body } = request;
      const webhook = ownWebhook(directory, auth.projectId, params.id);
      const eventType = webhookEvent(body.event_type ?? webhook.event_types.find(isWebhookEventType) ?? 'message.received');
      const event = sampleEvent(eventType, await ownerOf(auth), 'test', webhook.id);
      await publish(event);
      return reply.code(202).send({ event_id: event.event_id, event_type: event.event_type });
    },
  );

  app.post(
    '/webhooks/trigger',
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        summary: "Deliver a one-off sample event to the project's webhooks that listen to it",
        body: Type.Object({ event_type: Type.String({ maxLength: 100 }) }, { additionalProperties: false }),
        response: {
          202: Type.Composite([
            FiredEvent,
            Type.Object({
              webhook_ids: Type.Array(Type.String(), {
                description: "The enabled webhooks listening to the event now: the project's, or the whole account's for an account event",
              }),
            }),
          ]),
        },
      },
    },
    async (request, reply) => {
      const { auth, body } = request;
      const eventType = webhookEvent(body.event_type);
      const event = sampleEvent(eventType, await ownerOf(auth), 'manual');
      // As the dispatcher will match it: an account event (usage.threshold, advisory.published) reaches every webhook of the account.
      const candidates = event.scope === 'account' ? directory.webhooksOfAccount(auth.accountId) : directory.webhooksOf(auth.projectId);
      const webhookIds = candidates.filter((w) => w.enabled && listensTo(w.event_types, eventType)).map((w) => w.id);
      await publish(event);
      return reply.code(202).send({ event_id: event.event_id, event_type: event.event_type, webhook_ids: webhookIds });
    },
  );
};
