import Fastify from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { errorsPlugin } from './plugins/errors.js';
import { healthRoutes, type HealthOptions } from './health/routes.js';

export interface ApiDeps extends HealthOptions {
  readonly logger: Logger;
}

/**
 * The HTTP API. Every route declares its schemas; OpenAPI is generated from them and served at
 * `/openapi.json`, with a browsable copy at `/docs`.
 */
export async function buildServer(deps: ApiDeps) {
  const app = Fastify({
    loggerInstance: deps.logger,
    trustProxy: true,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Messaging Gateway API',
        version: '0.1.0',
        description: 'Send and receive messages through phone numbers, with signed webhooks and event streams.',
      },
      components: {
        securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key `svc_live_...`' } },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(errorsPlugin);

  await app.register(healthRoutes, { checkDependencies: deps.checkDependencies });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  return app;
}

export type ApiServer = Awaited<ReturnType<typeof buildServer>>;
