import type { FastifyInstance } from 'fastify';
import type { Directory, PartnerEntry } from '../../processors/directory.js';
import { hashSecret } from '../../shared/secret-token.js';
import { gatewayError } from '../errors.js';
import { defaultRateLimit, type RateLimiter } from '../plugins/rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The partner calling a /partner/* route, set by its authentication. */
    partner: PartnerEntry;
  }
}

const BEARER = /^Bearer\s+(\S+)$/i;
const PARTNER_SECRET = 'svc_partner_';

/**
 * Authenticates /partner/* (spec 4.4, 5): the partner secret in `Authorization: Bearer` only. A
 * secret sent anywhere in the query string is refused even when it is right, so a link or a log
 * line can never carry it. A deactivated partner answers 403 `partner_inactive`. The token bucket
 * of spec 8.1 is per API key: here only failed attempts draw from the caller's IP bucket.
 */
export function authenticatePartners(app: FastifyInstance, options: { directory: Directory; takeToken: RateLimiter }): void {
  app.decorateRequest('partner', undefined as unknown as PartnerEntry);
  app.addHook('onRequest', async (request) => {
    const query = request.url.includes('?') ? new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1)) : undefined;
    const inQuery = query !== undefined && [...query.values()].some((value) => value.includes(PARTNER_SECRET));
    const match = BEARER.exec(request.headers.authorization ?? '');
    const partner = inQuery || !match?.[1] ? undefined : options.directory.partnerBySecretHash(hashSecret(match[1]));
    if (partner === undefined) {
      if (!(await options.takeToken(`ip:${request.ip}`, defaultRateLimit))) throw gatewayError('rate_limited');
      throw gatewayError('partner_unauthorized');
    }
    if (!partner.active) throw gatewayError('partner_inactive');
    request.partner = partner;
  });
}
