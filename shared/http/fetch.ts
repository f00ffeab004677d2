// Outbound GET through undici: the private-address guard on every connection, timeouts for each
// phase plus a total deadline, redirects followed by hand (each hop connects through the guard),
// and a size cap enforced while the body streams.
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { OutboundHttpError, toOutboundHttpError } from './errors.js';
import { guardedConnector, type GuardOptions } from './guard.js';

export interface HttpFetcherOptions extends GuardOptions {
  readonly connectTimeoutMs?: number;
  /** From the request sent to the end of the response headers. */
  readonly headersTimeoutMs?: number;
  /** Longest silence while the body streams. */
  readonly bodyTimeoutMs?: number;
  /** Whole fetch, redirects and body included: a server dripping bytes cannot hold it forever. */
  readonly totalTimeoutMs?: number;
  readonly maxRedirects?: number;
}

const DEFAULTS = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 15_000,
  totalTimeoutMs: 120_000,
  maxRedirects: 5,
} as const;

export interface FetchedResponse {
  /** The URL that answered, after redirects. */
  readonly url: URL;
  /** `type/subtype` of Content-Type, lower case, without parameters. */
  readonly contentType: string | undefined;
  /** The body; it fails with an OutboundHttpError (`too_large`, `timeout`, ...) while streaming. */
  readonly body: Readable;
}

export interface HttpFetcher {
  /** GETs `url` and answers a 2xx response, or throws an OutboundHttpError. */
  get(url: string, options: { readonly maxBytes: number }): Promise<FetchedResponse>;
  close(): Promise<void>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const REQUEST_HEADERS = { accept: '*/*', 'user-agent': 'messaging-gateway' };

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function httpUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch (error) {
    throw OutboundHttpError.of('invalid_url', 'not a valid URL', error);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw OutboundHttpError.of('invalid_url', `unsupported URL scheme ${url.protocol}`);
  }
  return url;
}

function mediaType(headers: IncomingHttpHeaders): string | undefined {
  const value = single(headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
  return value === '' ? undefined : value;
}

async function* capped(body: AsyncIterable<Buffer>, maxBytes: number, host: string): AsyncGenerator<Buffer> {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      // Leaving the loop destroys the body, which closes the connection: nothing more is read.
      if (size > maxBytes) throw OutboundHttpError.of('too_large', `${host} sent more than ${maxBytes} bytes`);
      yield chunk;
    }
  } catch (error) {
    throw toOutboundHttpError(error, host);
  }
}

export function createHttpFetcher(options: HttpFetcherOptions = {}): HttpFetcher {
  const settings = { ...DEFAULTS, ...options };
  const agent = new Agent({
    connect: guardedConnector({ ...settings, timeoutMs: settings.connectTimeoutMs }),
    headersTimeout: settings.headersTimeoutMs,
    bodyTimeout: settings.bodyTimeoutMs,
  });

  async function send(url: URL, signal: AbortSignal) {
    try {
      return await request(url, { dispatcher: agent, method: 'GET', headers: REQUEST_HEADERS, signal });
    } catch (error) {
      throw toOutboundHttpError(error, url.host);
    }
  }

  return {
    async get(target, { maxBytes }) {
      const deadline = AbortSignal.timeout(settings.totalTimeoutMs);
      let url = httpUrl(target);
      for (let redirects = 0; ; redirects++) {
        const { statusCode: status, headers, body } = await send(url, deadline);
        const location = single(headers.location);
        // Bodies not wanted are dumped: up to undici's small limit (keeping the connection), else dropped.
        if (REDIRECTS.has(status) && location !== undefined) {
          void body.dump();
          if (redirects === settings.maxRedirects) {
            throw OutboundHttpError.of('too_many_redirects', `more than ${settings.maxRedirects} redirects from ${url.host}`);
          }
          url = httpUrl(location, url);
          continue;
        }
        if (status < 200 || status > 299) {
          void body.dump();
          throw OutboundHttpError.status(status, url.host);
        }
        if (Number(single(headers['content-length']) ?? 0) > maxBytes) {
          void body.dump();
          throw OutboundHttpError.of('too_large', `${url.host} announced more than ${maxBytes} bytes`);
        }
        return { url, contentType: mediaType(headers), body: Readable.from(capped(body, maxBytes, url.host), { objectMode: false }) };
      }
    },
    close: () => agent.close(),
  };
}
