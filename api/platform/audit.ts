import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteOptions } from '../context.js';
import { auditPage } from '../audit/pages.js';
import { AuditPageOut, AuditQuery } from '../audit/schemas.js';

/** The platform's own audit log: what administrators did to partners. */
export const platformAuditRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/platform/audit',
    {
      config: { surface: 'platform' },
      schema: { tags: ['platform'], summary: "The platform's audit log (partners), newest first", querystring: AuditQuery, response: { 200: AuditPageOut } },
    },
    async (request) => auditPage(ctx.clients.pool, null, request.query),
  );
};
