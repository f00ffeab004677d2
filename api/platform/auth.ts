import type { FastifyInstance } from 'fastify';
import type { Directory, PlatformAdminEntry } from '../../processors/directory.js';
import { hashSecret } from '../../shared/secret-token.js';
import { gatewayError } from '../errors.js';
import { keyUsable } from '../plugins/auth.js';
import { defaultRateLimit, type RateLimiter } from '../plugins/rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The platform administrator calling a /platform/* route. */
    platformAdmin: PlatformAdminEntry;
  }
}

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Authenticates /platform/* (spec 4.7): a platform administrator's credential `svc_platform_…` as a
 * bearer. A customer API key, even an owner's, is out of reach (403 forbidden, spec 5); anything
 * else is 401 unauthorized; failed attempts draw from the caller's IP bucket.
 */
export function authenticatePlatformAdmins(app: FastifyInstance, options: { directory: Directory; takeToken: RateLimiter }): void {
  app.decorateRequest('platformAdmin', undefined as unknown as PlatformAdminEntry);
  app.addHook('onRequest', async (request) => {
    const credential = BEARER.exec(request.headers.authorization ?? '')?.[1];
    const hash = credential === undefined ? undefined : hashSecret(credential);
    const admin = hash === undefined ? undefined : options.directory.platformAdminBySecretHash(hash);
    if (admin === undefined || admin.revoked_at !== null) {
      if (!(await options.takeToken(`ip:${request.ip}`, defaultRateLimit))) throw gatewayError('rate_limited');
      if (hash !== undefined && keyUsable(options.directory.keyByHash(hash))) throw gatewayError('forbidden');
      throw gatewayError('unauthorized');
    }
    request.platformAdmin = admin;
  });
}
