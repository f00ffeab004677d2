import ajvCompiler from '@fastify/ajv-compiler';
import compress from '@fastify/compress';
import Fastify, { type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { ApiContext } from './context.js';
import type { ConnectionId } from '../schemas/ids.js';
import { healthRoutes, type HealthOptions } from './health/routes.js';
import { instanceRoutes } from './instances/routes.js';
import { keyRoutes } from './keys/routes.js';
import { messageRoutes, type MessageRouteOptions } from './messages/routes.js';
import { campaignRoutes } from './campaigns/routes.js';
import { authPlugin, refuseUnknownRoutesToPartnerKeys } from './plugins/auth.js';
import { auditTrailPlugin } from './plugins/audit-trail.js';
import { auditRoutes } from './audit/routes.js';
import { answerClientError, answerFrameworkError, errorsPlugin, MAX_PARAM_LENGTH } from './plugins/errors.js';
import { strictInputPlugin } from './plugins/strict-input.js';
import { httpMetricsPlugin, type HttpMetrics } from './plugins/http-metrics.js';
import { metricsRoutes } from './metrics/routes.js';
import { securityOf, securitySchemes } from './openapi-security.js';
import type { Registry } from 'prom-client';
import { DEFAULT_BODY_LIMIT } from './body-limits.js';
import { createRateLimiter, type RateLimit } from './plugins/rate-limit.js';
import { poolRoutes } from './pools/routes.js';
import { contactRoutes, type ContactRouteOptions } from './contacts/routes.js';
import { tagRoutes } from './contacts/tags.js';
import { phoneListRoutes } from './audience/phone-lists.js';
import { contactGroupRoutes } from './audience/contact-groups.js';
import { conversationRoutes, type ConversationRouteOptions } from './conversations/routes.js';
import { groupRoutes, type GroupRouteOptions } from './groups/routes.js';
import { mediaRoutes, type MediaRoutesOptions } from './media/routes.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { sandboxPhoneRoutes } from './sandbox/phone-routes.js';
import { streamRoutes, type StreamRouteOptions } from './streams/index.js';
import { usageRoutes } from './usage/routes.js';
import { webhookRoutes } from './webhooks/index.js';
import { partnerRoutes } from './partner/routes.js';
import { myConnectionRoutes } from './me/connections.js';
import { callerRoutes } from './me/caller.js';
import { planRoutes } from './me/plan.js';
import { addonRoutes } from './me/addons.js';
import { billingRoutes } from './billing/routes.js';
import { brandRoutes } from './brand/routes.js';
import { accountWidgetRoutes } from './me/widgets.js';
import { advisoryRoutes } from './advisories/routes.js';
import { connectRoutes, type ConnectRouteOptions } from './connect/routes.js';
import type { SandboxPayments } from '../connectors/payments/sandbox.js';
import type { StripePayments } from '../connectors/payments/stripe.js';
import { sandboxPaymentRoutes } from './payments/sandbox-routes.js';
import { stripeWebhookRoutes } from './payments/stripe-webhook.js';
import { logoRoutes, platformRoutes } from './platform/routes.js';
import { accountRoutes } from './accounts/routes.js';
import { widgetRoutes } from './widget/routes.js';
import cookie from '@fastify/cookie';
import { PanelGate } from './panel/gate.js';
import { panelRoutes } from './panel/routes.js';
import { PanelSessions } from './panel/sessions.js';
import type { LiveNumbers } from './live/numbers.js';
import { presenceRoutes } from './presence/routes.js';
import { callRoutes } from './calls/routes.js';
import { chatRoutes } from './chats/routes.js';
import { labelRoutes } from './labels/routes.js';

export interface ApiDeps extends HealthOptions {
  readonly logger: Logger;
  readonly ctx: ApiContext;
  readonly messages: Omit<MessageRouteOptions, 'ctx'>;
  readonly rateLimitFor: (plan: string) => RateLimit;
  /** Which proxies' X-Forwarded-For is believed for the client's address (Fastify's `trustProxy`); false: none. */
  readonly trustProxy: boolean | string;
  /** The Connect component's build (`v1/connect.js`), served at `/v1/connect.js`. */
  readonly widgetDir: string;
  /** The panels: their build (`app.js`), served under `/panel`, and the key their CSRF tokens derive from. */
  readonly panel: { readonly dir: string; readonly csrfKey: string };
  /** Absolute base of the API as its users reach it (links to partner logos). */
  readonly publicBaseUrl: string;
  readonly contacts: Omit<ContactRouteOptions, 'ctx'>;
  readonly conversations: Omit<ConversationRouteOptions, 'ctx'>;
  readonly groups: Omit<GroupRouteOptions, 'ctx'>;
  readonly media: MediaRoutesOptions;
  readonly streams: Omit<StreamRouteOptions, 'ctx'>;
  /** The component's API: e-mail, payments, the stream hub (it is `streams.hub`) and the key of e-mail codes. */
  readonly connect: Pick<ConnectRouteOptions, 'mailer' | 'codeKey' | 'service'> & { readonly payments: SandboxPayments | StripePayments };
  /**
   * The process's registry and the HTTP series recorded in it; `/metrics` is served on the API's
   * port unless it has a port of its own, and needs `token` when one is set (api/metrics/access.ts).
   */
  readonly metrics: { readonly registry: Registry; readonly http: HttpMetrics; readonly onApiPort: boolean; readonly token: string | undefined };
  /** Reads and actions of a number's live session: presence, calls, chats, labels. */
  readonly numbers: LiveNumbers;
}

/**
 * The HTTP API. Every route declares its schemas; OpenAPI is generated from them and served at
 * `/openapi.json`, with a browsable copy at `/docs`, each operation with the credential it asks
 * for. Health and docs need no key; everything else sits behind the auth plugin (key, rate limit,
 * scope) or the authentication of its surface.
 */
export async function buildServer(deps: ApiDeps) {
  const app = Fastify({
    // Query strings can carry credentials (media signatures, connect session tokens): logged without them.
    loggerInstance: deps.logger.child({}, { serializers: { req: requestForLog } }),
    trustProxy: deps.trustProxy,
    bodyLimit: DEFAULT_BODY_LIMIT, // routes that take media or imports raise it (body-limits.ts)
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
    schemaController: { compilersFactory: { buildValidator: strictBodyValidators as ValidatorFactory } },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Every compressible answer over 1 KiB, by the client's Accept-Encoding (the component's bundle
  // among them); streams hijack their replies and are left as they are.
  await app.register(compress, { threshold: 1024, encodings: ['br', 'gzip', 'deflate'] });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Messaging Gateway API',
        version: '0.1.0',
        description: 'Send and receive messages through phone numbers, with signed webhooks and event streams.',
      },
      components: { securitySchemes },
    },
    // Each operation names the credential its route asks for (openapi-security.ts), `[]` when none.
    transform: ({ schema, url, route }) => ({ schema: { ...schema, security: securityOf(route.config, schema) }, url }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(httpMetricsPlugin, { metrics: deps.metrics.http });
  await app.register(errorsPlugin);
  await app.register(strictInputPlugin);
  await app.register(cookie);

  const { ctx } = deps;
  app.addHook('onRequest', refuseUnknownRoutesToPartnerKeys(ctx.directory));
  await app.register(auditTrailPlugin, { producer: ctx.clients.producer, clock: ctx.clock });
  await app.register(async (api) => {
    const takeToken = createRateLimiter(ctx.clients.pool);
    const panelSessions = new PanelSessions(ctx.clients.pool, deps.panel.csrfKey);
    const panel = new PanelGate(panelSessions, ctx.directory, ctx.clock);
    await api.register(authPlugin, {
      panel,
      directory: ctx.directory,
      connectionStanding: (id) => ctx.connectionWriter.keyStanding(id as ConnectionId),
      takeToken,
      rateLimitFor: deps.rateLimitFor,
    });
    await api.register(healthRoutes, { checkDependencies: deps.checkDependencies });
    const { registry, onApiPort, token } = deps.metrics;
    if (onApiPort) await api.register(metricsRoutes, { registry, access: { token, hostOnlyWithoutToken: true } });
    api.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
    await api.register(keyRoutes, { ctx });
    await api.register(instanceRoutes, { ctx });
    await api.register(poolRoutes, { ctx });
    await api.register(messageRoutes, { ctx, ...deps.messages });
    await api.register(campaignRoutes, { ctx, media: deps.messages.media, otp: deps.messages.otp });
    await api.register(conversationRoutes, { ctx, ...deps.conversations });
    await api.register(contactRoutes, { ctx, ...deps.contacts });
    await api.register(tagRoutes, { ctx });
    await api.register(phoneListRoutes, { ctx });
    await api.register(contactGroupRoutes, { ctx });
    await api.register(groupRoutes, { ctx, ...deps.groups });
    await api.register(usageRoutes, { ctx });
    await api.register(planRoutes, { ctx });
    await api.register(addonRoutes, { ctx });
    await api.register(billingRoutes, { ctx });
    await api.register(brandRoutes, { ctx });
    await api.register(accountWidgetRoutes, { ctx });
    await api.register(mediaRoutes, deps.media);
    // The sandbox's controls (its network, its phone, its payment form) exist in development mode only.
    const sandbox = ctx.clients.config.mode === 'development';
    if (sandbox) {
      await api.register(sandboxRoutes, { ctx });
      await api.register(sandboxPhoneRoutes, { ctx, hub: deps.streams.hub });
    }
    await api.register(streamRoutes, { ctx, ...deps.streams });
    await api.register(webhookRoutes, { ctx, cipher: deps.messages.cipher });
    await api.register(partnerRoutes, { ctx, takeToken });
    await api.register(callerRoutes, { ctx });
    await api.register(advisoryRoutes, { ctx });
    await api.register(myConnectionRoutes, { ctx });
    await api.register(connectRoutes, { ctx, takeToken, hub: deps.streams.hub, heartbeatMs: deps.streams.heartbeatMs, ...deps.connect });
    const { payments } = deps.connect;
    if (payments.name === 'stripe') await api.register(stripeWebhookRoutes, { ctx, payments });
    else if (sandbox) await api.register(sandboxPaymentRoutes, { ctx, payments });
    await api.register(platformRoutes, { ctx, takeToken, cipher: deps.messages.cipher, publicBaseUrl: deps.publicBaseUrl, panel, store: deps.media.store });
    await api.register(panelRoutes, { ctx, gate: panel, sessions: panelSessions, mailer: deps.connect.mailer, codeKey: deps.connect.codeKey, dir: deps.panel.dir });
    await api.register(logoRoutes, { ctx, store: deps.media.store });
    await api.register(accountRoutes, { ctx });
    await api.register(auditRoutes, { ctx });
    await api.register(widgetRoutes, { widgetDir: deps.widgetDir });
    await api.register(presenceRoutes, { ctx, numbers: deps.numbers });
    await api.register(callRoutes, { ctx, numbers: deps.numbers });
    await api.register(chatRoutes, { ctx, numbers: deps.numbers });
    await api.register(labelRoutes, { ctx, numbers: deps.numbers });
  });

  return app;
}

export type ApiServer = Awaited<ReturnType<typeof buildServer>>;

type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;
type Compile = (route: { httpPart?: string }) => unknown;
type CompilerPool = (externalSchemas: unknown, options?: { customOptions?: object }) => Compile;

// Fastify's own validator compiler, the version Fastify 5 uses.
const ajvPool = ajvCompiler() as unknown as CompilerPool;

/**
 * Fastify's AJV with one difference by part: querystring, params and headers arrive as text, so
 * they keep coercing (`limit=10` is a number); a JSON body has its own types and is taken as sent
 * (`"body": 12345` is refused, not turned into "12345").
 */
const strictBodyValidators: CompilerPool = (externalSchemas, options) => {
  const text = ajvPool(externalSchemas, options);
  const json = ajvPool(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } });
  return (route) => (route.httpPart === 'body' ? json : text)(route);
};

function requestForLog(request: { method: string; url: string; ip?: string }) {
  return { method: request.method, url: request.url.split('?')[0], remoteAddress: request.ip };
}
