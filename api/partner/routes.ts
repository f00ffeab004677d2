import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Customer } from '../../schemas/records.js';
import type { ConnectionEntry } from '../../processors/connections/view.js';
import type { PartnerEntry } from '../../processors/directory.js';
import { countryCode, parsePhone, patterns } from '../../schemas/phones.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { issueSession } from '../connect/sessions.js';
import { redeemConnectCode } from './connect-codes.js';
import { authenticatePartners } from './auth.js';
import { ConnectionOut, NumberOut, connectionNumbers, connectionOut } from './connection-out.js';
import { replaceConnectionKey } from '../../processors/connections/issued-key.js';
import { configWriter } from '../config-writes.js';
import type { RateLimiter } from '../plugins/rate-limit.js';
import { isEmailAddress } from '../../shared/email-address.js';

const MAX_EXTERNAL_ID = 200;

const PartnerOut = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  logo_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
  allowed_origins: Type.Array(Type.String()),
  webhook_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
  key_scopes: Type.Array(Type.String()),
});

// Lengths and presence are checked in the handler, which answers them with the spec's own codes.
const SessionIn = Type.Object(
  {
    external_id: Type.Optional(Type.String({ description: 'Your stable customer id, up to 200 characters', examples: ['cus_8812'] })),
    customer: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ maxLength: 200 })),
          email: Type.Optional(Type.String({ maxLength: 254 })),
          company: Type.Optional(Type.String({ maxLength: 200 })),
          phone: Type.Optional(Type.String({ pattern: `^${patterns.written}$`, description: 'E.164, or as written; a national number is read in country' })),
          country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166 alpha-2' })),
          locale: Type.Optional(Type.String({ maxLength: 35, description: 'BCP 47' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, examples: [{ external_id: 'cus_8812', customer: { name: 'Ana Souza', email: 'ana@padaria.example', company: 'Padaria Sol', country: 'BR', locale: 'pt-BR' } }] },
);

const SessionOut = Type.Object({
  session_token: Type.String({ description: 'cs_…, valid 30 minutes; hand it to the component only' }),
  session_id: Type.String({ description: 'csn_…: names the session in the component\'s events and to support; not a credential' }),
  expires_at: Type.String({ format: 'date-time' }),
  connection: Type.Object({ id: Type.String({ format: 'uuid' }), external_id: Type.String(), status: Type.String() }),
});

const KeyedConnectionOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  external_id: Type.String(),
  status: Type.String(),
  account_id: Type.String(),
  project_id: Type.String(),
  api_key: Type.String({ description: 'svc_live_…, returned only once' }),
  numbers: Type.Array(NumberOut),
});

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const config = { surface: 'partner' as const };
const tags = ['partner'];

/** The partner's backend (spec 4.4): its registration, sessions for its customers, the code exchange and its connections. */
export const partnerRoutes: FastifyPluginAsyncTypebox<RouteOptions & { takeToken: RateLimiter }> = async (app, { ctx, takeToken }) => {
  authenticatePartners(app, { directory: ctx.directory, takeToken });
  const { pool } = ctx.clients;

  /** One of the caller's connections, or 404 `connection_not_found` (unknown, or another partner's). */
  const own = (partnerId: string, id: string): ConnectionEntry => {
    const connection = ctx.connections.get(id);
    if (connection === undefined || connection.partner_id !== partnerId) throw gatewayError('connection_not_found');
    return connection;
  };

  app.get('/partner/me', { config, schema: { tags, summary: 'The partner registration (spec 2.7)', response: { 200: PartnerOut } } }, async (request) => {
    const { id, slug, name, logo_url, allowed_origins, webhook_url, key_scopes } = request.partner;
    return { id, slug, name, logo_url, allowed_origins: [...allowed_origins], webhook_url, key_scopes: [...key_scopes] };
  });

  app.post(
    '/partner/connect-sessions',
    {
      config,
      schema: {
        tags,
        summary: 'Open a component session for one of your customers; idempotent on external_id',
        body: SessionIn,
        response: { 201: SessionOut },
      },
    },
    async (request, reply) => {
      const { external_id: externalId, customer = {} } = request.body;
      if (externalId === undefined || externalId.trim() === '' || externalId.length > MAX_EXTERNAL_ID) throw gatewayError('external_id_required');
      const email = customer.email?.trim().toLowerCase();
      if (email === undefined || !isEmailAddress(email)) throw gatewayError('customer_email_required');
      const name = blankToNull(customer.name);
      const company = blankToNull(customer.company);
      if (name === null && company === null) throw gatewayError('customer_name_required');
      const phone = customer.phone === undefined ? undefined : parsePhone(customer.phone, countryCode(customer.country ?? ''));
      if (phone?.ok === false) throw gatewayError('invalid_request', { detail: `body/customer/phone: ${phone.reason}` });
      const data: Customer = {
        name,
        email,
        company,
        phone: phone?.e164 ?? null,
        country: customer.country?.toUpperCase() ?? null,
        locale: canonicalLocale(customer.locale),
      };
      const connection = await ctx.connectionWriter.open({ partnerId: request.partner.id, externalId, customer: data });
      const session = await issueSession(pool, { connectionId: connection.connection_id, partnerId: request.partner.id }, ctx.clock());
      return reply.code(201).send({
        session_token: session.token,
        session_id: session.sessionId,
        expires_at: new Date(session.expiresAt).toISOString(),
        connection: { id: connection.connection_id, external_id: connection.external_id, status: connection.to_status },
      });
    },
  );

  app.post(
    '/partner/connect/exchange',
    {
      config,
      schema: {
        tags,
        summary: 'Exchange the one-time code the component returned for the customer key (shown once)',
        body: Type.Object({ code: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false, examples: [{ code: 'cc_8Hq2…' }] }),
        response: { 200: KeyedConnectionOut },
      },
    },
    async (request) => {
      const code = request.body.code?.trim();
      if (code === undefined || code === '') throw gatewayError('code_required');
      const connectionId = await redeemConnectCode(pool, code, request.partner.id, ctx.clock());
      const connection = connectionId === undefined ? undefined : ctx.connections.get(connectionId);
      if (connection === undefined) throw gatewayError('invalid_code');
      return keyed(connection, await issueFor(connection, request.partner));
    },
  );

  app.get(
    '/partner/connections',
    {
      config,
      schema: {
        tags,
        summary: 'Your connections, newest first',
        querystring: Type.Object({ external_id: Type.Optional(Type.String({ maxLength: MAX_EXTERNAL_ID })), status: Type.Optional(Type.String({ maxLength: 40 })) }),
        response: { 200: Type.Object({ data: Type.Array(ConnectionOut) }) },
      },
    },
    async (request) => {
      const { external_id: externalId, status } = request.query;
      const matching = ctx.connections
        .ofPartner(request.partner.id)
        .filter((c) => (externalId === undefined || c.external_id === externalId) && (status === undefined || c.to_status === status))
        .sort((a, b) => b.created_at - a.created_at);
      return { data: await Promise.all(matching.map((c) => connectionOut(pool, c))) };
    },
  );

  app.get(
    '/partner/connections/:id',
    { config, schema: { tags, summary: 'One of your connections with its current numbers', params: IdParams, response: { 200: ConnectionOut } } },
    async (request) => connectionOut(pool, own(request.partner.id, request.params.id)),
  );

  app.post(
    '/partner/connections/:id/rotate-key',
    {
      config,
      schema: { tags, summary: 'A new key for an active connection; the previous one stops at once', params: IdParams, response: { 200: KeyedConnectionOut } },
    },
    async (request) => {
      const connection = own(request.partner.id, request.params.id);
      if (connection.to_status !== 'active') throw gatewayError('connection_not_active');
      return keyed(connection, await issueFor(connection, request.partner));
    },
  );

  app.delete(
    '/partner/connections/:id',
    { config, schema: { tags, summary: 'Revoke a connection: its key stops, connect.revoked (revoked_by partner)', params: IdParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const connection = own(request.partner.id, request.params.id);
      await ctx.connectionWriter.revoke(connection.connection_id, 'partner');
      return reply.code(204).send(null);
    },
  );

  async function issueFor(connection: ConnectionEntry, partner: PartnerEntry): Promise<string> {
    if (connection.to_status === 'revoked') throw gatewayError('connection_revoked');
    if (connection.account_id === null || connection.project_id === null) throw gatewayError('invalid_code');
    return replaceConnectionKey(configWriter(ctx), connection, partner, ctx.clock());
  }

  async function keyed(connection: ConnectionEntry, apiKey: string) {
    return {
      id: connection.connection_id,
      external_id: connection.external_id,
      status: connection.to_status,
      account_id: connection.account_id!,
      project_id: connection.project_id!,
      api_key: apiKey,
      numbers: await connectionNumbers(pool, connection),
    };
  }
};

function blankToNull(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? null : trimmed;
}

/** A BCP 47 tag in its canonical form, or null when absent or not a tag. */
function canonicalLocale(tag: string | undefined): string | null {
  if (tag === undefined || tag.trim() === '') return null;
  try {
    return Intl.getCanonicalLocales(tag.trim())[0] ?? null;
  } catch {
    return null;
  }
}
