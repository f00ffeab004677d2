// One webhook POST through undici, with the private-address guard of `connectors/http` on every
// connection, one deadline for the whole exchange, no redirects followed, and at most 1 KiB of
// the answer kept for the delivery history.
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { guardedConnector, OutboundHttpError, type GuardOptions } from '../../shared/http/index.js';

/** How an attempt ended on the wire; `outcome.ts` judges it. */
export type PostResult =
  | { readonly kind: 'response'; readonly status: number; readonly excerpt: string; readonly durationMs: number }
  | { readonly kind: 'timeout'; readonly error: string; readonly durationMs: number }
  /** Never sent: the URL is unusable or leads to a private address. */
  | { readonly kind: 'refused'; readonly error: string; readonly durationMs: number }
  /** Refused or reset connection, DNS or TLS failure. */
  | { readonly kind: 'transport'; readonly error: string; readonly durationMs: number }
  /** The poster was closed while waiting: the delivery stays unsettled and is made again later. */
  | { readonly kind: 'aborted'; readonly durationMs: number };

export interface WebhookPoster {
  post(url: string, body: string, headers: Readonly<Record<string, string>>): Promise<PostResult>;
  /** Aborts what is in flight (those posts answer `aborted`) and closes the connections. */
  close(): Promise<void>;
}

export interface WebhookPosterOptions extends GuardOptions {
  /** Whole exchange: connecting, sending, the answer's headers and its first KiB. */
  readonly timeoutMs: number;
}

export const EXCERPT_BYTES = 1_024;
/** Webhook URLs kept parsed (a dispatcher posts to few, many times each); past this many, the cache starts over. */
const PARSED_URLS = 1_000;
const USER_AGENT = 'messaging-gateway-webhooks/1';
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Abort reasons: the whole exchange took too long, or the poster is closing. */
const DEADLINE = Object.assign(new Error('webhook deadline'), { name: 'TimeoutError' });
const CLOSED = new Error('webhook poster closed');

export function createWebhookPoster(options: WebhookPosterOptions): WebhookPoster {
  const agent = new Agent({
    connect: guardedConnector(options),
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  // One cancel and one timer per post: cheaper than composing AbortSignal.timeout and AbortSignal.any.
  const inFlight = new Set<Cancel>();
  let closing = false;

  const parsed = new Map<string, URL>();
  /** The target of a post, parsed once per URL; undefined for a URL that is not valid. */
  const parse = (url: string): URL | undefined => {
    let target = parsed.get(url);
    if (target !== undefined) return target;
    try {
      target = new URL(url);
    } catch {
      return undefined;
    }
    if (parsed.size >= PARSED_URLS) parsed.clear();
    parsed.set(url, target);
    return target;
  };

  return {
    async post(url, body, headers) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const target = parse(url);
      if (target === undefined) return { kind: 'refused', error: 'not a valid URL', durationMs: 0 };
      if (target.protocol !== 'https:' && target.protocol !== 'http:') {
        return { kind: 'refused', error: `unsupported URL scheme ${target.protocol}`, durationMs: 0 };
      }
      const cancel = new Cancel();
      const deadline = setTimeout(() => cancel.abort(DEADLINE), options.timeoutMs);
      inFlight.add(cancel);
      try {
        const response = await request(target, {
          dispatcher: agent,
          method: 'POST',
          headers: { ...headers, 'user-agent': USER_AGENT },
          body,
          signal: cancel,
        });
        const excerpt = await readExcerpt(response.body);
        return { kind: 'response', status: response.statusCode, excerpt, durationMs: elapsed() };
      } catch (error) {
        if (closing) return { kind: 'aborted', durationMs: elapsed() };
        return failure(error, target.host, options.timeoutMs, elapsed());
      } finally {
        clearTimeout(deadline);
        inFlight.delete(cancel);
      }
    },
    async close() {
      closing = true;
      for (const cancel of inFlight) cancel.abort(CLOSED);
      await agent.destroy();
    },
  };
}

/**
 * Cancels one post. undici takes an event emitter for a signal, reading `aborted` and `reason` from
 * it; made for each post, it costs much less than an AbortController and its AbortSignal (making
 * the signals alone took 1.3% of a busy dispatcher's CPU profile, their listeners about as much).
 */
class Cancel extends EventEmitter {
  aborted = false;
  reason: Error | undefined;

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/**
 * The first KiB of an answer as text; the rest is not read (the connection is then dropped). An
 * answer cut short still counts by its status: what came is kept. Read through listeners: an async
 * iterator for each delivery cost more than the read itself.
 */
function readExcerpt(body: Readable): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      // Most answers are empty or one chunk: no copy for those.
      const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      resolve(whole.toString('utf8', 0, Math.min(size, EXCERPT_BYTES)));
    };
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size < EXCERPT_BYTES) return;
      finish();
      body.destroy();
    });
    body.once('end', finish).once('error', finish).once('close', finish);
  });
}

/** Names the failure; messages name the host only (a URL's query may hold a token). */
function failure(error: unknown, host: string, timeoutMs: number, durationMs: number): PostResult {
  const code = (error as { code?: unknown } | null)?.code;
  if ((typeof code === 'string' && TIMEOUT_CODES.has(code)) || (error instanceof Error && error.name === 'TimeoutError')) {
    return { kind: 'timeout', error: `${host} did not answer within ${timeoutMs} ms`, durationMs };
  }
  if (error instanceof OutboundHttpError && (error.kind === 'blocked_address' || error.kind === 'invalid_url')) {
    return { kind: 'refused', error: error.message, durationMs };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { kind: 'transport', error: `request to ${host} failed: ${detail}`.slice(0, 500), durationMs };
}
