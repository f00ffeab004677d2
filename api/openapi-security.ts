// What `/openapi.json` says each route needs, from the same route config the auth plugins read,
// so the document cannot say "bearer key" where the route answers without one.
import type { FastifyContextConfig, FastifySchema } from 'fastify';
import { PANEL_COOKIE } from './panel/sessions.js';

/** Every credential the API takes (spec 5), and those a few routes check themselves. */
export const securitySchemes = {
  apiKey: { type: 'http', scheme: 'bearer', description: 'API key `svc_live_...`' },
  partnerSecret: { type: 'http', scheme: 'bearer', description: 'Partner secret `svc_partner_...` (header only)' },
  platformAdmin: { type: 'http', scheme: 'bearer', description: 'Platform administrator credential `svc_platform_...`' },
  connectSession: { type: 'apiKey', in: 'header', name: 'X-Connect-Session', description: 'Component session token `cs_...` (30 minutes)' },
  panelSession: {
    type: 'apiKey',
    in: 'cookie',
    name: PANEL_COOKIE,
    description:
      "The panels' session, set by `POST /panel/login/verify`: it stands for a key of the account named in `X-Account-Id` " +
      "(or a platform administrator's credential on `/platform/*`); writes carry `X-CSRF-Token`",
  },
  mediaSignature: { type: 'apiKey', in: 'query', name: 'sig', description: 'The signature of a media link, with its `exp`, as given in `media.url`' },
  stripeSignature: { type: 'apiKey', in: 'header', name: 'Stripe-Signature', description: "Stripe's signature of the event, with the endpoint's signing secret" },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: '`METRICS_TOKEN`; while none is set, `/metrics` answers requests from the gateway\'s own host only',
  },
} as const;

export type SecuritySchemeName = keyof typeof securitySchemes;

/** One way to authenticate: every scheme it names is needed. An empty list of them: no credential. */
type SecurityRequirement = Partial<Record<SecuritySchemeName, readonly string[]>>;
type Security = NonNullable<FastifySchema['security']>;

/** The `schema.security` of a public route that checks a credential of its own (a signed link, a webhook signature). */
export function securedBy(scheme: SecuritySchemeName): Security {
  return [{ [scheme]: [] }];
}

const surfaces: Record<NonNullable<FastifyContextConfig['surface']>, readonly SecurityRequirement[]> = {
  partner: [{ partnerSecret: [] }],
  platform: [{ platformAdmin: [] }, { panelSession: [] }],
  connect: [{ connectSession: [] }],
};

/**
 * A route's security as the auth plugins apply it: a surface's own credential, none on a public
 * route, else an API key or the panels' session standing for one. A route that declares its own
 * (`schema.security`) keeps it.
 */
export function securityOf(config: FastifyContextConfig | undefined, schema: FastifySchema | undefined): Security {
  if (schema?.security !== undefined) return schema.security;
  if (config?.surface !== undefined) return surfaces[config.surface];
  if (config?.public === true) return [];
  return [{ apiKey: [] }, { panelSession: [] }];
}
