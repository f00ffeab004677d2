import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { deliveryHeaders } from '../../events/signature.js';
import { SseParser, type SseMessage } from './sse-parser.js';

export interface RelayOptions {
  /** Base URL of the gateway API. */
  readonly apiUrl: string;
  readonly apiKey: string;
  /** Where each event is posted; absent: print only. */
  readonly forwardTo: string | undefined;
  /** Event types to relay; empty: all. */
  readonly events: readonly string[];
  readonly print: boolean;
  /** Signs the forwarded posts, as a webhook's secret signs production deliveries. */
  readonly secret: string;
}

export interface RelayOutput {
  line(text: string): void;
  error(text: string): void;
}

/** Without a byte for this long (heartbeats come every 15 s by default) the connection is taken for dead. */
const SILENCE_MS = 60_000;
const FORWARD_TIMEOUT_MS = 10_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/** An answer of the API that retrying will not change (bad key, key without the scope, bad filter). */
class Refused extends Error {}

/**
 * The local relay: follows `GET /webhooks/listen` and posts each event's data, byte for byte, to
 * a local URL with the headers a production delivery carries, signed with `secret`. After a drop
 * it reconnects with backoff and `Last-Event-ID`, so nothing is missed or repeated. Resolves with
 * the exit code once `signal` aborts (0) or the API refuses the key or the request (1).
 */
export async function runRelay(options: RelayOptions, out: RelayOutput, signal: AbortSignal): Promise<number> {
  const url = listenUrl(options);
  let lastEventId = '';
  let failures = 0;
  let connectedBefore = false;
  while (!signal.aborted) {
    let problem: string;
    try {
      const response = await request(url, {
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'text/event-stream',
          ...(lastEventId !== '' && { 'last-event-id': lastEventId }),
        },
        signal,
        headersTimeout: SILENCE_MS,
        bodyTimeout: SILENCE_MS,
      });
      if (response.statusCode !== 200) {
        const answer = await response.body.text().catch(() => '');
        const refusal = `${response.statusCode} ${errorSummary(answer)}`;
        if (response.statusCode >= 400 && response.statusCode < 500 && response.statusCode !== 408 && response.statusCode !== 429) {
          throw new Refused(refusal);
        }
        throw new Error(refusal);
      }
      failures = 0;
      out.line(connectedBefore ? `Reconnected to ${url.href}` : `Ready: listening to ${url.href}${options.forwardTo ? `, forwarding to ${options.forwardTo}` : ''} (Ctrl-C to stop)`);
      connectedBefore = true;

      const received: SseMessage[] = [];
      const parser = new SseParser((message) => received.push(message), lastEventId);
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
        for (const message of received.splice(0)) await relayOne(message, options, out, signal);
        lastEventId = parser.lastEventId;
      }
      problem = 'the stream ended';
    } catch (error) {
      if (signal.aborted) break;
      if (error instanceof Refused) {
        out.error(`The API refused the stream: ${error.message}`);
        return 1;
      }
      problem = error instanceof Error ? error.message : String(error);
    }
    if (signal.aborted) break;
    const wait = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** failures++);
    out.error(`Connection to ${url.origin} lost (${problem}); reconnecting in ${wait} ms`);
    await sleep(wait, undefined, { signal }).catch(() => undefined);
  }
  return 0;
}

function listenUrl(options: RelayOptions): URL {
  const url = new URL('webhooks/listen', options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/`);
  if (options.events.length > 0) url.searchParams.set('events', options.events.join(','));
  return url;
}

async function relayOne(message: SseMessage, options: RelayOptions, out: RelayOutput, signal: AbortSignal): Promise<void> {
  // The server filters too; this keeps the promise of --events against any server.
  if (options.events.length > 0 && !options.events.includes(message.type)) return;
  const eventId = eventIdOf(message.data);
  if (eventId === undefined) {
    out.error(`Skipped an event that is not an envelope (${message.type})`);
    return;
  }
  const outcome = options.forwardTo === undefined ? undefined : await forward(options.forwardTo, options.secret, message, eventId, signal);
  if (options.print) {
    out.line(`${new Date().toISOString()}  ${message.type}  ${eventId}${outcome === undefined ? '' : `  -> ${outcome.text}`}`);
  } else if (outcome !== undefined && !outcome.ok) {
    out.error(`${message.type} ${eventId} -> ${outcome.text}`);
  }
}

async function forward(target: string, secret: string, message: SseMessage, eventId: string, signal: AbortSignal): Promise<{ ok: boolean; text: string }> {
  const started = performance.now();
  try {
    const response = await request(target, {
      method: 'POST',
      headers: deliveryHeaders(secret, message.data, { event_id: eventId, event_type: message.type }),
      body: message.data,
      signal,
      headersTimeout: FORWARD_TIMEOUT_MS,
      bodyTimeout: FORWARD_TIMEOUT_MS,
    });
    await response.body.dump();
    const ms = Math.round(performance.now() - started);
    return { ok: response.statusCode < 300, text: `${response.statusCode} (${ms} ms)` };
  } catch (error) {
    return { ok: false, text: `failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function eventIdOf(data: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null && 'event_id' in parsed && typeof parsed.event_id === 'string' ? parsed.event_id : undefined;
  } catch {
    return undefined;
  }
}

function errorSummary(body: string): string {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    if (typeof parsed.code === 'string') return `${parsed.code}${typeof parsed.message === 'string' ? `: ${parsed.message}` : ''}`;
  } catch {
    // not the gateway's error object
  }
  return body.slice(0, 200);
}
