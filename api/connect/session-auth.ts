import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import type { ConnectionEntry, ConnectionsView } from '../../processors/connections/view.js';
import type { Directory, PartnerEntry } from '../../processors/directory.js';
import type { Clock } from '../../shared/clock.js';
import { gatewayError, toLocale, type Locale } from '../errors.js';
import { defaultRateLimit, type RateLimiter } from '../plugins/rate-limit.js';
import { findSession, type ConnectSession } from './sessions.js';
import { normalizeOrigin } from '../../shared/origin.js';

export interface ConnectContext {
  readonly session: ConnectSession;
  readonly partner: PartnerEntry;
  readonly connection: ConnectionEntry;
  /** The customer's language (customer.locale), for e-mails and messages. */
  readonly locale: Locale;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The component's session on /connect/* routes, set by its authentication. */
    connect: ConnectContext;
  }
  interface FastifyContextConfig {
    /** The one /connect route that also takes the token as `?session=` (an EventSource cannot set headers). */
    sessionInQuery?: boolean;
  }
}

const HEADER = 'x-connect-session';
const ALLOWED_HEADERS = 'X-Connect-Session, Content-Type, Last-Event-ID';

/**
 * Authenticates /connect/* (spec 4.5, 5): the session token in `X-Connect-Session` (in the query
 * only on the stream), 30 minutes on the clock, the page's Origin in the partner's list, the
 * partner active, the connection not revoked. CORS answers echo any page's origin: the server,
 * not the browser, holds each request to its own partner's list, and a page it refuses reads only
 * the refusal (`origin_not_allowed`, `partner_inactive`), which the component passes to `onError`
 * instead of a network error. No cookie is ever read here, so echoing an origin lends it nothing.
 * Failed attempts draw from the caller's IP bucket (spec 8.1 limits API keys, not sessions).
 */
export function authenticateSessions(
  app: FastifyInstance,
  options: { pool: Pool; directory: Directory; connections: ConnectionsView; clock: Clock; takeToken: RateLimiter },
): void {
  app.decorateRequest('connect', undefined as unknown as ConnectContext);
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    reply.header('Vary', 'Origin');
    if (origin !== undefined && normalizeOrigin(origin) !== undefined) reply.header('Access-Control-Allow-Origin', origin);
    if (request.method === 'OPTIONS') return;
    const token = tokenOf(request);
    if (token === undefined) {
      if (!(await options.takeToken(`ip:${request.ip}`, defaultRateLimit))) throw gatewayError('rate_limited');
      throw gatewayError('connect_session_required');
    }
    const session = /^cs_[A-Za-z0-9]{1,64}$/.test(token) ? await findSession(options.pool, token) : undefined;
    if (session === undefined) {
      if (!(await options.takeToken(`ip:${request.ip}`, defaultRateLimit))) throw gatewayError('rate_limited');
      throw gatewayError('invalid_connect_session');
    }
    if (options.clock() >= session.expiresAt) throw gatewayError('connect_session_expired');
    const partner = options.directory.partners.get(session.partnerId);
    if (partner === undefined || !partner.active) throw gatewayError('partner_inactive');
    const from = origin === undefined ? undefined : normalizeOrigin(origin);
    if (from === undefined || !partner.allowed_origins.some((allowed) => normalizeOrigin(allowed) === from)) {
      throw gatewayError('origin_not_allowed');
    }
    const connection = options.connections.get(session.connectionId);
    if (connection === undefined) throw gatewayError('invalid_connect_session');
    const locale = toLocale(connection.customer.locale ?? '') ?? 'en';
    request.accountLocale = locale;
    if (connection.to_status === 'revoked') throw gatewayError('connection_revoked');
    request.connect = { session, partner, connection, locale };
  });
  app.options('/connect/*', { config: { surface: 'connect', public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS')
      .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
      .header('Access-Control-Max-Age', '600')
      .send(),
  );
}

function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers[HEADER];
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  if (request.routeOptions.config.sessionInQuery !== true) return undefined;
  const query = request.query as { session?: unknown } | undefined;
  return typeof query?.session === 'string' && query.session !== '' ? query.session : undefined;
}
