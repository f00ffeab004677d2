import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { isoTime } from '../../shared/iso-time.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

const MeOut = Type.Object({
  account: Type.Object({
    id: Type.String(),
    name: Type.String(),
    plan: Type.String({ description: 'free, pro or scale' }),
    locale: Type.String(),
    country: Type.Union([Type.String(), Type.Null()], { description: 'ISO 3166 alpha-2 in which phones written in national format are read; null: none' }),
  }),
  project: Type.Object({ id: Type.String(), name: Type.String(), is_default: Type.Boolean() }),
  key: Type.Object({
    id: Type.String({ description: 'The key id; `panel:<e-mail>` when the caller is signed in to the panel' }),
    prefix: Type.Union([Type.String(), Type.Null()], { description: 'First characters of the key; null for a panel sign-in' }),
    role: Type.String({ description: 'owner, admin or agent' }),
    scopes: Type.Array(Type.String(), { description: '`*` for every scope' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'End of the grace period of a rotated key' }),
  }),
  connection: Type.Union(
    [
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        external_id: Type.String(),
        status: Type.String(),
        partner: Type.Object({ id: Type.String(), name: Type.String() }),
      }),
      Type.Null(),
    ],
    { description: 'The partner connection a partner-issued key belongs to; null for every other key' },
  ),
});

/**
 * `GET /me` (spec 5 names it in a partner-issued key's reach): the account, project and key of the
 * caller, and for a partner-issued key its connection. Any valid key reads it, with no scope: it
 * tells a key only what the key already is, which an integration checks before anything else.
 */
export const callerRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory, connections } = ctx;

  app.get(
    '/me',
    { schema: { tags: ['account'], summary: 'The account, project and key of the caller (and the connection of a partner-issued key)', response: { 200: MeOut } } },
    async (request) => {
      const { accountId, projectId, keyId, role, scopes } = request.auth;
      const account = directory.accounts.get(accountId);
      const project = directory.projects.get(projectId);
      // The auth plugin found both a moment ago; a deletion in between leaves nothing to describe.
      if (account === undefined || project === undefined) throw gatewayError('unauthorized');
      const key = directory.key(keyId);
      const connectionId = key?.connection_id ?? null;
      const connection = connectionId === null ? undefined : connections.get(connectionId);
      const partner = connection === undefined ? undefined : directory.partners.get(connection.partner_id);
      return {
        account: { id: account.id, name: account.name, plan: account.plan, locale: account.locale, country: account.country },
        project: { id: project.id, name: project.name, is_default: project.is_default },
        key: { id: keyId, prefix: key?.prefix ?? null, role, scopes: [...scopes], expires_at: isoTime(key?.expires_at ?? null) },
        connection:
          connection === undefined
            ? null
            : {
                id: connection.connection_id,
                external_id: connection.external_id,
                status: connection.to_status,
                partner: { id: connection.partner_id, name: partner?.name ?? '' },
              },
      };
    },
  );
};
