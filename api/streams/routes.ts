import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isStreamOnly, isWebhookEventType } from '../../events/catalogue.js';
import type { PublicEvent } from '../../schemas/records.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { keyUsable } from '../plugins/auth.js';
import { coversPartitions, parseCursor, type Cursor } from './cursor.js';
import type { StreamHub } from './hub.js';
import { SseResponse, type SseLimits } from './sse.js';

export interface StreamRouteOptions extends RouteOptions {
  readonly hub: StreamHub;
  readonly heartbeatMs: number;
}

const MIN_HEARTBEAT_MS = 100;
const MAX_CURSOR_LENGTH = 200;
/** Streams one key may hold open at once in a process; one more answers 429 `rate_limited`. */
export const MAX_STREAMS_PER_KEY = 20;
/** A client may leave 1 MiB unread, and keep a catch-up waiting 30 s, before it is let go (it resumes with its last id). */
const limits: SseLimits = { maxBufferedBytes: 1024 * 1024, drainTimeoutMs: 30_000 };

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

  const serve = (request: FastifyRequest, reply: FastifyReply, accepts: (event: PublicEvent) => boolean, lastId: string | undefined) => {
    const { projectId, accountId, keyId } = request.auth;
    const from = lastId === undefined ? undefined : cursorOf(lastId, hub.partitionsOf(projectId, accountId));
    if (!hub.accepting) throw gatewayError('service_unavailable');
    const held = perKey.get(keyId) ?? 0;
    if (held >= MAX_STREAMS_PER_KEY) throw gatewayError('rate_limited');
    perKey.set(keyId, held + 1);

    reply.hijack();
    const stream = new SseResponse(reply.raw, limits);
    open.add(stream);
    const subscription = hub.subscribe({ projectId, accountId, accepts, from, sink: stream });
    const heartbeat = setInterval(() => {
      // A stream outlives its request: it ends once its key is revoked or expires.
      if (keyUsable(ctx.directory.key(keyId))) stream.ping(subscription.cursor());
      else stream.close();
    }, Math.max(MIN_HEARTBEAT_MS, heartbeatMs));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      subscription.close();
      open.delete(stream);
      const left = (perKey.get(keyId) ?? 1) - 1;
      if (left > 0) perKey.set(keyId, left);
      else perKey.delete(keyId);
    };
    reply.raw.once('close', release);
    // A client gone while its request was authenticated closed before anyone listened.
    if (reply.raw.socket?.destroyed ?? true) release();
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

function lastEventIdOf(request: FastifyRequest, fromQuery: string | undefined): string | undefined {
  const header = request.headers['last-event-id'];
  return (typeof header === 'string' && header.trim() !== '' ? header : undefined) ?? fromQuery;
}

function cursorOf(text: string, partitions: readonly number[]): Cursor {
  const cursor = text.length > MAX_CURSOR_LENGTH ? undefined : parseCursor(text);
  if (cursor === undefined || !coversPartitions(cursor, partitions)) {
    throw gatewayError('invalid_request', { detail: 'Last-Event-ID is not an event id of this stream' });
  }
  return cursor;
}

function eventTypesOf(list: string | undefined): ReadonlySet<string> {
  const types = new Set((list ?? '').split(',').map((type) => type.trim()).filter(Boolean));
  for (const type of types) {
    if (!isWebhookEventType(type)) throw gatewayError('invalid_request', { detail: `events: unknown event type ${type}` });
  }
  return types;
}
