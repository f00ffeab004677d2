import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PublicEvent } from '../../schemas/records.js';
import { gatewayError } from '../errors.js';
import { coversPartitions, parseCursor, type Cursor } from './cursor.js';
import type { StreamHub } from './hub.js';
import { SseResponse, type SseLimits } from './sse.js';

const MIN_HEARTBEAT_MS = 100;
export const MAX_CURSOR_LENGTH = 200;
/** A client may leave 1 MiB unread, and keep a catch-up waiting 30 s, before it is let go (it resumes with its last id). */
const limits: SseLimits = { maxBufferedBytes: 1024 * 1024, drainTimeoutMs: 30_000 };

export interface ServedStream {
  readonly projectId: string;
  readonly accountId: string;
  readonly accepts: (event: PublicEvent) => boolean;
  /** The `Last-Event-ID` sent (header, or the query for clients that cannot set one). */
  readonly lastEventId: string | undefined;
  /** Asked at every heartbeat: once false, the stream ends (a revoked key, an expired session). */
  readonly stillAllowed: () => boolean;
  readonly heartbeatMs: number;
  /** Called once the stream is open, and once when it ends, whoever ends it. */
  readonly onOpen?: (stream: SseResponse) => void;
  readonly onEnd?: (stream: SseResponse) => void;
}

/**
 * Hands the request's socket to an SSE stream of the hub, from the present or after the client's
 * `Last-Event-ID`, with a heartbeat that carries the cursor and ends the stream once it is no
 * longer allowed. Answers 400 for an id that is not a cursor of these partitions and 503 while
 * the hub is not accepting.
 */
export function serveStream(hub: StreamHub, reply: FastifyReply, served: ServedStream): void {
  const { projectId, accountId } = served;
  const from = served.lastEventId === undefined ? undefined : cursorOf(served.lastEventId, hub.partitionsOf(projectId, accountId));
  if (!hub.accepting) throw gatewayError('service_unavailable');
  // A hijacked reply writes only what is on the raw response: keep headers set earlier (CORS).
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
  reply.hijack();
  const stream = new SseResponse(reply.raw, limits);
  const subscription = hub.subscribe({ projectId, accountId, accepts: served.accepts, from, sink: stream });
  served.onOpen?.(stream);
  const heartbeat = setInterval(() => {
    if (served.stillAllowed()) stream.ping(subscription.cursor());
    else stream.close();
  }, Math.max(MIN_HEARTBEAT_MS, served.heartbeatMs));
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    subscription.close();
    served.onEnd?.(stream);
  };
  reply.raw.once('close', end);
  // A client gone while its request was authenticated closed before anyone listened.
  if (reply.raw.socket?.destroyed ?? true) end();
}

export function lastEventIdOf(request: FastifyRequest, fromQuery: string | undefined): string | undefined {
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
