import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Who may read `/metrics`. With a token (`METRICS_TOKEN`), whoever sends it as a bearer and nobody
 * else, wherever it is served. Without one, the API's port answers the gateway's own host only
 * (local development works, a deployment's public port shows nothing), while a port of its own
 * (`METRICS_PORT`) answers whoever reaches it: the operator chose who that is.
 */
export interface MetricsAccess {
  readonly token: string | undefined;
  /** Without a token: true on the API's port (the host itself only), false on a port of its own (open). */
  readonly hostOnlyWithoutToken: boolean;
}

/** The parts of a request the decision reads: Fastify's and Node's requests both have them. */
export interface MetricsRequest {
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

const BEARER = /^Bearer\s+(\S+)$/i;
const LOOPBACK = /^(127(\.\d{1,3}){3}|::1|::ffff:127(\.\d{1,3}){3})$/;
/** Headers a proxy adds: a request through one is not the host's own, whatever its socket says. */
const FORWARDING = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;

const digest = (text: string) => createHash('sha256').update(text).digest();

export function mayReadMetrics(request: MetricsRequest, access: MetricsAccess): boolean {
  if (access.token !== undefined) {
    const sent = BEARER.exec(request.headers.authorization ?? '')?.[1];
    return sent !== undefined && timingSafeEqual(digest(sent), digest(access.token));
  }
  if (!access.hostOnlyWithoutToken) return true;
  return LOOPBACK.test(request.socket.remoteAddress ?? '') && FORWARDING.every((name) => request.headers[name] === undefined);
}
