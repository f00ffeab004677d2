import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { KeyedSerial } from '../../shared/serial.js';
import { configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import type { KeyEntry } from '../../processors/directory.js';
import { gatewayError } from '../errors.js';
import { roles, scopes, type Role, type Scope } from '../plugins/auth.js';
import { createKey, revokeKey, rotateKey } from '../../processors/config/keys.js';
import { isoTime } from '../../shared/iso-time.js';

const KeyOut = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'First characters of the key, to recognise it' }),
  role: Type.String(),
  scopes: Type.Array(Type.String()),
  project_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const IssuedOut = Type.Intersect([KeyOut, Type.Object({ api_key: Type.String({ description: 'Shown once' }) })]);
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });

const roleRank: Record<Role, number> = { agent: 0, admin: 1, owner: 2 };

function keyOut(key: KeyEntry) {
  return {
    id: key.id,
    prefix: key.prefix,
    role: key.role,
    scopes: [...key.scopes],
    project_id: key.project_id,
    created_at: new Date(key.created_at).toISOString(),
    expires_at: isoTime(key.expires_at),
    revoked_at: isoTime(key.revoked_at),
  };
}

/** API keys of the account: list, create, rotate (the old key lives on for a grace period), revoke. */
export const keyRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory, clients } = ctx;
  const config = { scope: 'keys:write' as const, partnerKeys: false };
  const ownKey = (accountId: string, id: string) => {
    const key = directory.key(id);
    if (!key || key.account_id !== accountId) throw gatewayError('not_found');
    return key;
  };
  const writer = configWriter(ctx);
  // Changes of one key run one at a time in this process, each on the key as the last one left it:
  // a rotation cannot write back a key that a revocation has just ended.
  const changes = new KeyedSerial();
  const changeKey = <T>(id: string, change: () => Promise<T>): Promise<T> => changes.run(id, change);

  app.get('/keys', { config, schema: { tags: ['keys'], summary: 'List the API keys of the account', response: { 200: Type.Object({ data: Type.Array(KeyOut) }) } } },
    async (request) => ({ data: directory.keysOf(request.auth.accountId).map(keyOut) }));

  app.post(
    '/keys',
    {
      config: { ...config, audit: { action: 'key.created', target: 'answer' } },
      schema: {
        tags: ['keys'],
        summary: 'Create an API key (shown once)',
        body: Type.Object(
          {
            role: Type.Optional(Type.Union(roles.map((r) => Type.Literal(r)))),
            scopes: Type.Optional(Type.Array(Type.Union([...scopes.map((s) => Type.Literal(s)), Type.Literal('*')]), { minItems: 1 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: IssuedOut },
      },
    },
    async (request, reply) => {
      const role = (request.body.role ?? 'agent') as Role;
      const wanted: (Scope | '*')[] = request.body.scopes ?? (role === 'agent' ? ['instances:read', 'messages:send'] : ['*']);
      // A key never makes a key that reaches further than itself.
      const mine = request.auth.scopes;
      const withinScopes = mine.includes('*') || wanted.every((s) => s !== '*' && mine.includes(s));
      if (roleRank[role] > roleRank[request.auth.role] || !withinScopes) throw gatewayError('forbidden');
      const issued = await createKey(writer, { accountId: request.auth.accountId, projectId: request.auth.projectId, role, scopes: wanted });
      return reply.code(201).send({ ...keyOut(directory.key(issued.id)!), api_key: issued.apiKey });
    },
  );

  app.post(
    '/keys/:id/rotate',
    { config: { ...config, audit: { action: 'key.rotated', target: 'param' } }, schema: { tags: ['keys'], summary: 'Rotate a key: a new key now, the old one keeps working for the grace period', params: Params, response: { 201: Type.Intersect([IssuedOut, Type.Object({ rotated_from: KeyOut })]) } } },
    async (request, reply) => changeKey(request.params.id, async () => {
      const old = ownKey(request.auth.accountId, request.params.id);
      if (old.revoked_at !== null) throw gatewayError('not_found');
      const graceEnds = Math.min(old.expires_at ?? Infinity, Date.now() + clients.config.keyRotationGraceMs);
      const issued = await rotateKey(writer, old, graceEnds, Date.now());
      return reply.code(201).send({ ...keyOut(directory.key(issued.id)!), api_key: issued.apiKey, rotated_from: keyOut(directory.key(old.id)!) });
    }),
  );

  app.delete(
    '/keys/:id',
    { config: { ...config, audit: { action: 'key.revoked', target: 'param' } }, schema: { tags: ['keys'], summary: 'Revoke a key at once', params: Params, response: { 200: KeyOut } } },
    async (request) => changeKey(request.params.id, async () => {
      const key = ownKey(request.auth.accountId, request.params.id);
      await revokeKey(writer, key, Date.now());
      return keyOut(directory.key(key.id)!);
    }),
  );
};
