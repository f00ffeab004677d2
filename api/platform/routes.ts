import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { MediaStore } from '../../connectors/media/store.js';
import type { PartnerEntry } from '../../processors/directory.js';
import { setPartnerLogo } from '../../processors/config/partner-logos.js';
import {
  changePartner,
  partnerOf,
  registerPartner,
  rotatePartnerSecret,
  rotatePartnerWebhookSecret,
  setPartnerActive,
  type PartnerRegistry,
} from '../../processors/config/partners.js';
import type { Cipher } from '../../shared/cipher.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { ConnectionOut, connectionOut } from '../partner/connection-out.js';
import type { RateLimiter } from '../plugins/rate-limit.js';
import { partnerKeyScopes as partnerScopes } from '../plugins/auth.js';
import { authenticatePlatformAdmins } from './auth.js';
import { deadDeliveryRoutes } from './dead-deliveries.js';
import { partnerUsageRoutes } from './partner-usage.js';
import { partnerDeliveryRoutes } from './partner-deliveries.js';
import { platformAuditRoutes } from './audit.js';
import { privateHost } from '../../shared/http/addresses.js';
import { sqlRoutes } from './sql.js';
import { checkLogo, MAX_LOGO_BYTES } from './logo.js';
import type { PanelGate } from '../panel/gate.js';

const SLUG = '^[a-z0-9][a-z0-9-]{1,62}$';
const config = { surface: 'platform' as const };
const tags = ['platform'];
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });

const PartnerFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  allowed_origins: Type.Array(Type.String({ maxLength: 300 }), { maxItems: 50, description: 'Origins of the pages that open the component, each exact' }),
  webhook_url: Type.Union([Type.String({ maxLength: 2_000, format: 'uri' }), Type.Null()]),
  key_scopes: Type.Array(Type.String({ enum: [...partnerScopes] }), { maxItems: partnerScopes.length, uniqueItems: true }),
};

const PartnerOut = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  ...PartnerFields,
  logo_url: Type.Union([Type.String(), Type.Null()]),
  webhook_url_warning: Type.Union([Type.Literal('private_address'), Type.Null()], {
    description: 'private_address: the webhook URL names a loopback, private or otherwise special-purpose host, where the dispatcher does not deliver',
  }),
  active: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
});

function partnerOut(p: PartnerEntry) {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    allowed_origins: [...p.allowed_origins],
    webhook_url: p.webhook_url,
    key_scopes: [...p.key_scopes],
    logo_url: p.logo_url,
    webhook_url_warning: p.webhook_url !== null && privateHost(p.webhook_url) ? ('private_address' as const) : null,
    active: p.active,
    created_at: new Date(p.created_at).toISOString(),
  };
}

/**
 * Platform administration (spec 2.7, 4.7): partners, their secrets (shown once: the partner secret
 * and the partner webhook secret; a rotation ends the previous one at once), deactivation, the
 * logo, and each partner's connections.
 */
export const platformRoutes: FastifyPluginAsyncTypebox<
  RouteOptions & { takeToken: RateLimiter; cipher: Cipher; publicBaseUrl: string; panel: Pick<PanelGate, 'platformAdmin'>; store: MediaStore }
> = async (app, { ctx, takeToken, cipher, publicBaseUrl, panel, store }) => {
  authenticatePlatformAdmins(app, { directory: ctx.directory, takeToken, panel });
  await app.register(multipart, { limits: { fileSize: MAX_LOGO_BYTES, files: 1, fields: 5, parts: 6 } });
  await app.register(deadDeliveryRoutes, { ctx });
  await app.register(partnerDeliveryRoutes, { ctx });
  await app.register(partnerUsageRoutes, { ctx });
  await app.register(platformAuditRoutes, { ctx });
  await app.register(sqlRoutes, { ctx });
  const { directory } = ctx;

  const registry: PartnerRegistry = { producer: ctx.clients.producer, directory, cipher, clock: ctx.clock };

  app.post(
    '/platform/partners',
    {
      config,
      schema: {
        tags,
        summary: 'Register a partner; its secret and webhook secret are shown once',
        body: Type.Object(
          { ...PartnerFields, slug: Type.String({ pattern: SLUG }), webhook_url: Type.Optional(PartnerFields.webhook_url), key_scopes: Type.Optional(PartnerFields.key_scopes) },
          {
            additionalProperties: false,
            examples: [{ name: 'Loja Parceira', slug: 'loja-parceira', allowed_origins: ['https://app.loja.example'], webhook_url: 'https://api.loja.example/hooks/gateway', key_scopes: ['instances:read', 'messages:send'] }],
          },
        ),
        response: { 201: Type.Intersect([PartnerOut, Type.Object({ partner_secret: Type.String(), webhook_secret: Type.String() })]) },
      },
    },
    async (request, reply) => {
      const { partner, partnerSecret, webhookSecret } = await registerPartner(registry, request.body);
      return reply.code(201).send({ ...partnerOut(partner), partner_secret: partnerSecret, webhook_secret: webhookSecret });
    },
  );

  app.get('/platform/partners', { config, schema: { tags, summary: 'Every partner', response: { 200: Type.Object({ data: Type.Array(PartnerOut) }) } } }, async () => ({
    data: [...directory.partners.values()].sort((a, b) => a.created_at - b.created_at).map(partnerOut),
  }));

  app.get('/platform/partners/:id', { config, schema: { tags, summary: 'One partner', params: Params, response: { 200: PartnerOut } } }, async (request) =>
    partnerOut(partnerOf(registry, request.params.id)),
  );

  app.patch(
    '/platform/partners/:id',
    {
      config: { ...config, audit: { action: 'partner.changed', target: 'param' } },
      schema: {
        tags,
        summary: 'Change a partner: name, origins, webhook URL, scopes',
        params: Params,
        body: Type.Partial(Type.Object(PartnerFields), { additionalProperties: false, minProperties: 1 }),
        response: { 200: PartnerOut },
      },
    },
    async (request) => partnerOut(await changePartner(registry, request.params.id, request.body)),
  );

  app.post(
    '/platform/partners/:id/rotate-secret',
    { config: { ...config, audit: { action: 'partner.secret_rotated', target: 'param' } }, schema: { tags, summary: 'A new partner secret, shown once; the previous one stops at once', params: Params, response: { 200: Type.Object({ partner_secret: Type.String() }) } } },
    async (request) => ({ partner_secret: await rotatePartnerSecret(registry, request.params.id) }),
  );

  app.post(
    '/platform/partners/:id/rotate-webhook-secret',
    { config: { ...config, audit: { action: 'partner.webhook_secret_rotated', target: 'param' } }, schema: { tags, summary: 'A new partner webhook secret, shown once; the previous one stops at once', params: Params, response: { 200: Type.Object({ webhook_secret: Type.String() }) } } },
    async (request) => ({ webhook_secret: await rotatePartnerWebhookSecret(registry, request.params.id) }),
  );

  for (const [action, active] of [['deactivate', false], ['activate', true]] as const) {
    app.post(
      `/platform/partners/:id/${action}`,
      {
        config: { ...config, audit: { action: `partner.${action}d`, target: 'param' } },
        schema: {
          tags,
          summary: active ? 'Reactivate a partner' : 'Deactivate a partner: sessions stop opening, its keys answer 401 connect_revoked',
          params: Params,
          response: { 200: PartnerOut },
        },
      },
      async (request) => partnerOut(await setPartnerActive(registry, request.params.id, active)),
    );
  }

  app.get(
    '/platform/partners/:id/connections',
    {
      config,
      schema: {
        tags,
        summary: "The partner's connections (external_id, customer, status, date)",
        params: Params,
        querystring: Type.Object({ status: Type.Optional(Type.String({ maxLength: 40 })), external_id: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: { 200: Type.Object({ data: Type.Array(ConnectionOut) }) },
      },
    },
    async (request) => {
      const partner = partnerOf(registry, request.params.id);
      const { status, external_id: externalId } = request.query;
      const list = ctx.connections
        .ofPartner(partner.id)
        .filter((c) => (status === undefined || c.to_status === status) && (externalId === undefined || c.external_id === externalId))
        .sort((a, b) => b.created_at - a.created_at);
      return { data: await Promise.all(list.map((c) => connectionOut(ctx.clients.pool, c))) };
    },
  );

  app.post(
    '/platform/partners/:id/logo',
    {
      config,
      schema: {
        tags,
        summary: 'Upload the logo: multipart field `file`, PNG, JPEG, WebP or SVG by its bytes, up to 2 MB',
        params: Params,
        consumes: ['multipart/form-data'],
        response: { 200: PartnerOut },
      },
    },
    async (request) => {
      const partner = partnerOf(registry, request.params.id);
      let bytes: Buffer | undefined;
      try {
        const file = await request.file();
        if (file === undefined || file.fieldname !== 'file') throw gatewayError('invalid_request', { detail: 'a multipart field named file is required' });
        bytes = await file.toBuffer();
      } catch (error) {
        if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw gatewayError('media_too_large');
        if ((error as { code?: string }).code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') throw gatewayError('invalid_request', { detail: 'send multipart/form-data with a field named file' });
        throw error;
      }
      const check = await checkLogo(bytes);
      if (!check.ok) throw gatewayError('invalid_request', { detail: check.why });
      const media = await store.put(bytes, { mimeType: check.contentType, filename: null, owner: null });
      const logo = { content_type: check.contentType, sha256: media.sha256, size: media.size, storage_key: media.storage_key };
      const logoUrl = `${publicBaseUrl.replace(/\/+$/, '')}/partners/${partner.id}/logo?v=${media.sha256.slice(0, 16)}`;
      // Bytes stay stored when the write fails: the record may have reached the log all the same.
      const { partner: changed, replaced } = await setPartnerLogo(registry, partner.id, logo, logoUrl);
      if (replaced !== undefined) await store.remove(replaced.storage_key).catch((error: unknown) => request.log.warn({ err: error }, 'the replaced logo stays in the media store'));
      return partnerOut(changed);
    },
  );
};

/** The logos, served to anyone (the component shows them) in a way that cannot run anything. */
export const logoRoutes: FastifyPluginAsyncTypebox<RouteOptions & { store: MediaStore }> = async (app, { ctx, store }) => {
  app.get(
    '/partners/:id/logo',
    { config: { public: true }, schema: { tags, summary: "A partner's logo", params: Params, querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) }) } },
    async (request, reply) => {
      const logo = ctx.directory.partnerLogo(request.params.id);
      const stored = logo && (await store.get(logo.storage_key));
      if (logo === undefined || stored === undefined) throw gatewayError('not_found');
      return reply
        .header('Content-Type', logo.content_type)
        .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'public, max-age=86400')
        .header('ETag', `"${logo.sha256}"`)
        .header('Content-Length', String(stored.size))
        .send(stored.body);
    },
  );
};
