import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { ConnectionOut, connectionOut } from '../partner/connection-out.js';

const MyConnectionOut = Type.Intersect([
  ConnectionOut,
  Type.Object({ partner_name: Type.String(), partner_logo_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()]) }),
]);

/**
 * The customer's side of Connect (spec 2.6, 3.1): the apps connected to the account, never with a
 * key, and the disconnect that only account admins may make (owner and admin keys).
 */
export const myConnectionRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const config = { partnerKeys: false };

  app.get(
    '/me/connections',
    { config, schema: { tags: ['connect'], summary: 'Apps connected to the account through partners', response: { 200: Type.Object({ data: Type.Array(MyConnectionOut) }) } } },
    async (request) => {
      const mine = ctx.connections.ofAccount(request.auth.accountId).filter((c) => c.to_status !== 'revoked' && c.to_status !== 'pending_account');
      const data = await Promise.all(
        mine
          .sort((a, b) => b.created_at - a.created_at)
          .map(async (c) => {
            const partner = ctx.directory.partners.get(c.partner_id);
            return { ...(await connectionOut(ctx.clients.pool, c)), partner_name: partner?.name ?? '', partner_logo_url: partner?.logo_url ?? null };
          }),
      );
      return { data };
    },
  );

  app.delete(
    '/me/connections/:id',
    {
      config: { ...config, audit: { action: 'connection.disconnected', target: 'param' } },
      schema: {
        tags: ['connect'],
        summary: 'Disconnect an app (account admins): its key stops, connect.revoked (revoked_by customer)',
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      if (request.auth.role === 'agent') throw gatewayError('forbidden');
      const connection = ctx.connections.get(request.params.id);
      if (connection === undefined || connection.account_id !== request.auth.accountId || connection.to_status === 'revoked') throw gatewayError('not_found');
      await ctx.connectionWriter.revoke(connection.connection_id, 'customer');
      return reply.code(204).send(null);
    },
  );
};
