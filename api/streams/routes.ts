import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isStreamOnly, isWebhookEventType } from '../../events/catalogue.js';
import type { PublicEvent } from '../../schemas/records.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { keyUsable } from '../plugins/auth.js';
import type { StreamHub } from './hub.js';
import { lastEventIdOf, MAX_CURSOR_LENGTH, serveStream } from './serve.js';
import type { SseResponse } from './sse.js';

export interface StreamRouteOptions extends RouteOptions {
  readonly hub: StreamHub;
  readonly heartbeatMs: number;
}

/** Streams one key may hold open at once in a process; one more answers 429 `rate_limited`. */
export const MAX_STREAMS_PER_KEY = 20;

const lastEventId = Type.String({
  maxLength: MAX_CURSOR_LENGTH,
  description: 'For clients that cannot set headers: the `Last-Event-ID` to resume after (the header wins when both are sent)',
});

const StreamQuery = Type.Object({ last_event_id: Type.Optional(lastEventId) });
const ListenQuery = Type.Object({
  last_event_id: Type.Optional(lastEventId),
  events: Type.Optional(Type.String({ maxLength: 2_000, description: 'Comma-separated event types to receive; omitted: all' })),
});

const eventStream = (description: string) => ({
  200: { description, content: { 'text/event-stream': { schema: Type.String() } } },
});

/**
 * Server-sent events of the key's project (spec 4.3): `GET /stream` carries every event of the
 * project (pairing codes and status changes too) and of its account; `GET /webhooks/listen`
 * mirrors what webhooks receive, whether or not one is registered. Both resume after
 * `Last-Event-ID` and are out of reach of partner-issued keys.
 */
export const streamRoutes: FastifyPluginAsyncTypebox<StreamRouteOptions> = async (app, { ctx, hub, heartbeatMs }) => {
  const open = new Set<SseResponse>();
  const perKey = new Map<string, number>();
  // Open streams would keep the server from closing.
  app.addHook('preClose', async () => {
    for (const stream of open) stream.close();
  });

  const serve = (request: FastifyRequest, reply: FastifyReply, accepts: (event: PublicEvent) => boolean, lastEventId: string | undefined) => {
    const { projectId, accountId, keyId } = request.auth;
    const held = perKey.get(keyId) ?? 0;
    if (held >= MAX_STREAMS_PER_KEY) throw gatewayError('rate_limited');
    serveStream(hub, reply, {
      projectId,
      accountId,
      accepts,
      lastEventId,
      heartbeatMs,
      // A stream outlives its request: it ends once its key is revoked or expires.
      stillAllowed: () => keyUsable(ctx.directory.key(keyId)),
      onOpen: (stream) => {
        open.add(stream);
        perKey.set(keyId, (perKey.get(keyId) ?? 0) + 1);
      },
      onEnd: (stream) => {
        open.delete(stream);
        const left = (perKey.get(keyId) ?? 1) - 1;
        if (left > 0) perKey.set(keyId, left);
        else perKey.delete(keyId);
      },
    });
  };

  app.get(
    '/stream',
    {
      config: { scope: 'events:read', partnerKeys: false },
      schema: {
        tags: ['events'],
        summary: "Server-sent events of the project: every event, pairing codes and number status included, and the account's events",
        querystring: StreamQuery,
        response: eventStream('`event:` the event type, `data:` the envelope of spec 2.5, `id:` a cursor to resume after'),
      },
    },
    async (request, reply) => {
      serve(request, reply, () => true, lastEventIdOf(request, request.query.last_event_id));
    },
  );

  app.get(
    '/webhooks/listen',
    {
      config: { scope: 'events:read', partnerKeys: false },
      schema: {
        tags: ['events'],
        summary: 'Server-sent events mirroring what webhooks of the project receive, whether or not one is registered',
        querystring: ListenQuery,
        response: eventStream('The events of `GET /stream` that webhooks receive: no pairing codes or status changes'),
      },
    },
    async (request, reply) => {
      const types = eventTypesOf(request.query.events);
      const accepts = (event: PublicEvent) => !isStreamOnly(event.event_type) && (types.size === 0 || types.has(event.event_type));
      serve(request, reply, accepts, lastEventIdOf(request, request.query.last_event_id));
    },
  );
};

function eventTypesOf(list: string | undefined): ReadonlySet<string> {
  const types = new Set((list ?? '').split(',').map((type) => type.trim()).filter(Boolean));
  for (const type of types) {
    if (!isWebhookEventType(type)) throw gatewayError('invalid_request', { detail: `events: unknown event type ${type}` });
  }
  return types;
}
