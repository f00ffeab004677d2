import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { tagCounts } from '../../processors/contacts/index.js';
import { retag } from '../../processors/contacts/write.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { Tag } from './schemas.js';

const TagOut = Type.Object({
  name: Type.String(),
  contacts: Type.Integer({ description: 'Contacts carrying the tag' }),
});
const TagParams = Type.Object({ name: Tag });

/**
 * `/tags`: the tags the account's contacts carry (a tag exists while a contact carries it), and
 * renaming or removing one across all of them. Part of the account-wide contact base (spec 5).
 */
export const tagRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { pool, producer } = ctx.clients;

  app.get(
    '/tags',
    {
      config: { scope: 'contacts:read', partnerKeys: false },
      schema: { tags: ['contacts'], summary: "The account's tags, by name, with how many contacts carry each", response: { 200: Type.Object({ data: Type.Array(TagOut) }) } },
    },
    async (request) => ({ data: await tagCounts(pool, request.auth.accountId) }),
  );

  app.patch(
    '/tags/:name',
    {
      config: { scope: 'contacts:write', partnerKeys: false },
      schema: {
        tags: ['contacts'],
        summary: 'Rename a tag on every contact carrying it; a name already in use merges the two',
        params: TagParams,
        body: Type.Object({ name: Tag }, { additionalProperties: false }),
        response: { 200: TagOut },
      },
    },
    async (request) => {
      const { accountId } = request.auth;
      const from = request.params.name;
      const to = request.body.name.trim();
      if (to === '') throw gatewayError('invalid_request', { detail: 'name must not be blank' });
      if (to === from) {
        const same = (await tagCounts(pool, accountId)).find((tag) => tag.name === from);
        if (same === undefined) throw gatewayError('not_found');
        return same;
      }
      const contacts = await retag({ pool, producer }, accountId, from, (tags) => [...new Set(tags.map((tag) => (tag === from ? to : tag)))]);
      if (contacts === 0) throw gatewayError('not_found');
      return { name: to, contacts };
    },
  );

  app.delete(
    '/tags/:name',
    {
      config: { scope: 'contacts:write', partnerKeys: false },
      schema: { tags: ['contacts'], summary: 'Remove a tag from every contact carrying it', params: TagParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const from = request.params.name;
      const contacts = await retag({ pool, producer }, request.auth.accountId, from, (tags) => tags.filter((tag) => tag !== from));
      if (contacts === 0) throw gatewayError('not_found');
      return reply.code(204).send(null);
    },
  );
};
