import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { DEFAULT_LOCALE, errorBody } from '../api/errors.js';
import { mayReadMetrics } from '../api/metrics/access.js';
import { httpMetrics, type HttpMetrics } from '../api/plugins/http-metrics.js';
import { sendMetrics, type SendMetrics } from '../connectors/network/index.js';
import { deliveryMetrics, type DeliveryMetrics } from '../connectors/webhooks/index.js';
import { registerConsumerLag, type Kafka, type RunningGroups } from '../topics/index.js';

/** The one registry of a process, and the series its roles record into it. */
export interface Metrics {
  readonly registry: Registry;
  readonly http: HttpMetrics;
  readonly sends: SendMetrics;
  readonly deliveries: DeliveryMetrics;
  close(): Promise<void>;
}

/**
 * Builds the registry with Node's process metrics and every gateway series. Consumer lag is read
 * from the brokers for the groups in `groups`; dead letters are counted by the producer (clients.ts).
 */
export function createMetrics(deps: { kafka: Kafka; groups: RunningGroups; logger: Logger }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const closeLag = registerConsumerLag({
    kafka: deps.kafka,
    groups: deps.groups,
    registry,
    onError: (err) => deps.logger.warn({ err }, 'consumer lag could not be read'),
  });
  return {
    registry,
    http: httpMetrics(registry),
    sends: sendMetrics(registry),
    deliveries: deliveryMetrics(registry),
    close: closeLag,
  };
}

/**
 * `GET /metrics` on a port of its own (`METRICS_PORT`), for any process; the API then no longer
 * serves it on its port. With `token`, only a request that sends it is answered.
 */
export async function serveMetrics(registry: Registry, host: string, port: number, token?: string): Promise<{ stop(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    if (!mayReadMetrics(request, { token, hostOnlyWithoutToken: false })) {
      response.writeHead(401, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(errorBody('metrics_unauthorized', DEFAULT_LOCALE)));
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return { stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
