import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';
import { gatewayError } from '../errors.js';
import { securedBy } from '../openapi-security.js';
import { mayReadMetrics, type MetricsAccess } from './access.js';

export interface MetricsRouteOptions {
  readonly registry: Registry;
  readonly access: MetricsAccess;
}

/**
 * `GET /metrics` in the Prometheus text format, without an API key: its labels are groups,
 * topics, partitions, routes and statuses, never an account, a project or a number. Who may read
 * it is access.ts's rule (the token, else the host itself).
 */
export const metricsRoutes: FastifyPluginAsyncTypebox<MetricsRouteOptions> = async (app, { registry, access }) => {
  app.get(
    '/metrics',
    {
      config: { public: true },
      schema: { tags: ['operations'], summary: 'Metrics in the Prometheus text format', security: securedBy('metricsToken') },
    },
    async (request, reply) => {
      if (!mayReadMetrics(request, access)) throw gatewayError('metrics_unauthorized');
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
};
