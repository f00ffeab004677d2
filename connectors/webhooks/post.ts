// One webhook POST through undici, with the private-address guard of `connectors/http` on every
// connection, one deadline for the whole exchange, no redirects followed, and at most 1 KiB of
// the answer kept for the delivery history.
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
  // One controller and one timer per post: cheaper than composing AbortSignal.timeout and AbortSignal.any.
  const inFlight = new Set<AbortController>();
  let closing = false;

  return {
    async post(url, body, headers) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return { kind: 'refused', error: 'not a valid URL', durationMs: 0 };
      }
      if (target.protocol !== 'https:' && target.protocol !== 'http:') {
        return { kind: 'refused', error: `unsupported URL scheme ${target.protocol}`, durationMs: 0 };
      }
      const controller = new AbortController();
      const deadline = setTimeout(() => controller.abort(DEADLINE), options.timeoutMs);
      inFlight.add(controller);
      try {
        const response = await request(target, {
          dispatcher: agent,
          method: 'POST',
          headers: { ...headers, 'user-agent': USER_AGENT },
          body,
          signal: controller.signal,
        });
        const excerpt = await readExcerpt(response.body);
        return { kind: 'response', status: response.statusCode, excerpt, durationMs: elapsed() };
      } catch (error) {
        if (closing) return { kind: 'aborted', durationMs: elapsed() };
        return failure(error, target.host, options.timeoutMs, elapsed());
      } finally {
        clearTimeout(deadline);
        inFlight.delete(controller);
      }
    },
    async close() {
      closing = true;
      for (const controller of inFlight) controller.abort(CLOSED);
      await agent.destroy();
    },
  };
}

/** The first KiB of an answer as text; the rest is not read (the connection is then dropped). */
async function readExcerpt(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= EXCERPT_BYTES) break;
    }
  } catch {
    // An answer cut short still counts by its status; keep what came.
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
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
