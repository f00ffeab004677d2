import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { type BrandEntry, type OfficialEntry } from '../../processors/directory.js';
import { includesConnect } from '../../processors/usage/plans.js';
import { writeAccountSetting, type AccountSetting } from '../../processors/config/account-settings.js';
import { isoTime } from '../../shared/iso-time.js';
import { configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

const Color = (description: string) => Type.Union([Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' }), Type.Null()], { description: `${description}, #RRGGBB` });
const HttpsUrl = (description: string) => Type.String({ maxLength: 2048, pattern: '^https://[^\\s]+$', description });

const BrandOut = Type.Object({
  name: Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], { description: 'Shown instead of the account name; null: the account name' }),
  logo_url: Type.Union([HttpsUrl('Logo, an https URL'), Type.Null()]),
  primary_color: Color('Main color'),
  accent_color: Color('Buttons and links'),
});
const BrandIn = Type.Partial(BrandOut, { additionalProperties: false, examples: [{ name: 'Shop', logo_url: 'https://shop.example/logo.png', primary_color: '#0A7CFF' }] });

const OfficialOut = Type.Object({
  status: Type.Union([Type.Literal('none'), Type.Literal('pending')], { description: 'none: never requested; pending: under review' }),
  business_name: Type.Union([Type.String(), Type.Null()]),
  website: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  requested_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const OfficialIn = Type.Object(
  {
    business_name: Type.String({ minLength: 1, maxLength: 200 }),
    website: HttpsUrl('The business website, an https URL'),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  },
  { additionalProperties: false, examples: [{ business_name: 'Shop Ltda', website: 'https://shop.example' }] },
);

const brandOut = (entry: BrandEntry | undefined) => entry ?? { name: null, logo_url: null, primary_color: null, accent_color: null };
const officialOut = (entry: OfficialEntry | undefined) =>
  entry === undefined
    ? { status: 'none' as const, business_name: null, website: null, description: null, requested_at: null }
    : { status: 'pending' as const, business_name: entry.business_name, website: entry.website, description: entry.description, requested_at: isoTime(entry.requested_at) };

/**
 * The account's identity towards its customers (spec 4.3 names, spec 5 keeps partner-issued keys
 * out): `GET/PUT /brand`, the name, logo and colors, and `GET/POST /official`, the request to be an
 * official business sender (the one whose buttons and lists arrive as such, spec 4.2). Each is one
 * record per account on `gw.config`; any key of the account reads, owner and admin keys write.
 */
export const brandRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory } = ctx;
  const config = { partnerKeys: false };
  const write = (request: FastifyRequest, entity: AccountSetting) => writeAccountSetting(configWriter(ctx), request.auth.accountId, entity, ctx.clock());
  const requireAdmin = (request: FastifyRequest) => {
    if (request.auth.role === 'agent') throw gatewayError('forbidden');
  };

  app.get('/brand', { config, schema: { tags: ['account'], summary: "The account's brand", response: { 200: BrandOut } } }, async (request) =>
    brandOut(directory.brandOf(request.auth.accountId)),
  );

  app.put(
    '/brand',
    { config, schema: { tags: ['account'], summary: 'Replace the brand (account admins); what is omitted becomes null', body: BrandIn, response: { 200: BrandOut } } },
    async (request) => {
      requireAdmin(request);
      const { name = null, logo_url = null, primary_color = null, accent_color = null } = request.body;
      await write(request, { kind: 'brand', name, logo_url, primary_color, accent_color });
      return brandOut(directory.brandOf(request.auth.accountId));
    },
  );

  app.get('/official', { config, schema: { tags: ['account'], summary: 'The request to be an official business sender', response: { 200: OfficialOut } } }, async (request) =>
    officialOut(directory.officialOf(request.auth.accountId)),
  );

  app.post(
    '/official',
    {
      config,
      schema: {
        tags: ['account'],
        summary: 'Request to be an official business sender (account admins, paid plans); a new request replaces a pending one',
        body: OfficialIn,
        response: { 202: OfficialOut },
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      if (!includesConnect(request.auth.plan)) throw gatewayError('payment_required');
      const { business_name, website, description = null } = request.body;
      await write(request, { kind: 'official_request', business_name, website, description, status: 'pending', requested_at: ctx.clock() });
      return reply.code(202).send(officialOut(directory.officialOf(request.auth.accountId)));
    },
  );
};
