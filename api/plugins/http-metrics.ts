import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Histogram, type Registry } from 'prom-client';

export interface HttpMetrics {
  answered(method: string, route: string, status: number, seconds: number): void;
}

export function httpMetrics(registry: Registry): HttpMetrics {
  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route pattern (streams count until they close).',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    answered(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
  };
}

/** Requests that matched no route share one label, so unknown URLs cannot grow the series. */
const UNMATCHED = '(unmatched)';

/**
 * Counts every answer by the route's pattern (`/v1/messages/:id`), never the URL, whose ids would
 * make one series per message and name accounts.
 */
const recordAnswers: FastifyPluginAsync<{ metrics: HttpMetrics }> = async (app, { metrics }) => {
  app.addHook('onResponse', async (request, reply) => {
    metrics.answered(request.method, request.routeOptions.url ?? UNMATCHED, reply.statusCode, reply.elapsedTime / 1000);
  });
};

export const httpMetricsPlugin = fp(recordAnswers, { name: 'gateway-http-metrics', fastify: '5.x' });
