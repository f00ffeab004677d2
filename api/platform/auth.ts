import type { FastifyInstance, FastifyRequest } from 'fastify';
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
 * bearer, or the panel's cookie of a signed-in administrator. A customer API key, even an owner's, is out of reach (403 forbidden, spec 5); anything
 * else is 401 unauthorized; failed attempts draw from the caller's IP bucket.
 */
export function authenticatePlatformAdmins(
  app: FastifyInstance,
  options: { directory: Directory; takeToken: RateLimiter; panel?: { platformAdmin(request: FastifyRequest): Promise<PlatformAdminEntry | undefined> } },
): void {
  app.decorateRequest('platformAdmin', undefined as unknown as PlatformAdminEntry);
  app.addHook('onRequest', async (request) => {
    // The platform panel: a signed-in administrator's cookie (writes carry the CSRF token).
    const signedIn = request.headers.authorization === undefined ? await options.panel?.platformAdmin(request) : undefined;
    if (signedIn !== undefined) {
      request.platformAdmin = signedIn;
      return;
    }
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
