import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { DependencyCheck, DependencyName } from '../../shared/readiness.js';

export interface HealthOptions {
  readonly checkDependencies: () => Promise<Record<DependencyName, DependencyCheck>>;
}

const Check = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  latency_ms: Type.Integer(),
  error: Type.Optional(Type.String()),
});

const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  checks: Type.Object({
    kafka: Check,
    registry: Check,
    postgres: Check,
    clickhouse: Check,
    s3: Check,
    smtp: Check,
  }),
});

/** Liveness (`/health`: the process answers) and readiness (`/ready`: every dependency answers). */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, options) => {
  app.get(
    '/health',
    {
      config: { public: true },
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process is up and serving HTTP',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/ready',
    {
      config: { public: true },
      schema: {
        tags: ['operations'],
        summary: 'Readiness: each dependency of the gateway, probed now',
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      const checks = await options.checkDependencies();
      const ready = Object.values(checks).every((check) => check.status === 'up');
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
    },
  );
};
