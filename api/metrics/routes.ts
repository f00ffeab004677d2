import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Registry } from 'prom-client';

export interface MetricsRouteOptions {
  readonly registry: Registry;
}

/**
 * `GET /metrics` in the Prometheus text format, without a key like `/health`: its labels are
 * groups, topics, partitions, routes and statuses, never an account, a project or a number.
 */
export const metricsRoutes: FastifyPluginAsyncTypebox<MetricsRouteOptions> = async (app, { registry }) => {
  app.get(
    '/metrics',
    { config: { public: true }, schema: { tags: ['operations'], summary: 'Metrics in the Prometheus text format' } },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
};
