import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { RouteOptions } from '../context.js';

const AdvisoryOut = Type.Object({
  advisory_id: Type.String(),
  title: Type.String(),
  impact: Type.String({ description: 'What happens to integrations that do not act' }),
  action: Type.String({ description: 'What the integration must do' }),
  link: Type.String({ description: 'Details' }),
  published_at: Type.String({ format: 'date-time' }),
});

/**
 * `GET /advisories` (spec 5 names it in a partner-issued key's reach): the advisories published to
 * the caller's account, as their `advisory.published` events carry them, kept on `gw.config` at any
 * age. Any valid key reads it, with no scope: an integration is told what it must change.
 */
export const advisoryRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/advisories',
    {
      schema: {
        tags: ['account'],
        summary: 'The advisories published to the account (changes that require action on the integration), newest first',
        response: { 200: Type.Object({ data: Type.Array(AdvisoryOut) }) },
      },
    },
    async (request) => ({
      data: ctx.directory.advisoriesOf(request.auth.accountId).map(({ id, title, impact, action, link, published_at }) => ({
        advisory_id: id,
        title,
        impact,
        action,
        link,
        published_at: new Date(published_at).toISOString(),
      })),
    }),
  );
};
