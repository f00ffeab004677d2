import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { auditPage } from './pages.js';
import { AuditPageOut, AuditQuery } from './schemas.js';

/** The account's audit log (`gw.audit`): who rotated, revoked, disconnected, added or removed what, when and from where. Owners and admins only. */
export const auditRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/audit',
    {
      config: { partnerKeys: false },
      schema: { tags: ['account'], summary: "The account's audit log, newest first", querystring: AuditQuery, response: { 200: AuditPageOut } },
    },
    async (request) => {
      if (request.auth.role === 'agent') throw gatewayError('forbidden');
      return auditPage(ctx.clients.pool, request.auth.accountId, request.query);
    },
  );
};
