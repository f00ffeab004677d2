import { Counter, Histogram, type Registry } from 'prom-client';
import type { DeliveryOutcome, DeliveryTargetKind } from '../../schemas/records.js';

/**
 * How each attempt ended: the recorded outcome, or `dead` when it was the last one and the delivery
 * went to `gw.deliveries.dead`, `dropped` when its webhook is gone, `deferred` when the endpoint's
 * queue was full and it moved to the first retry tier without counting as an attempt.
 */
export type AttemptEnd = DeliveryOutcome | 'dead' | 'dropped' | 'deferred';

export interface DeliveryMetrics {
  ended(end: AttemptEnd, target: DeliveryTargetKind): void;
  /** A 2xx answer to the body of an event that happened at `eventAt`. */
  delivered(eventAt: number, target: DeliveryTargetKind): void;
}

export function deliveryMetrics(registry: Registry): DeliveryMetrics {
  const deliveries = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Webhook delivery attempts by how they ended and the kind of target (account_webhook, partner_webhook).',
    labelNames: ['outcome', 'target'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'gateway_webhook_delivery_latency_seconds',
    help: 'From the event (its timestamp) to the 2xx answer of the webhook, retries included.',
    labelNames: ['target'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 7200],
    registers: [registry],
  });
  return {
    ended: (end, target) => deliveries.inc({ outcome: end, target }),
    delivered: (eventAt, target) => latency.observe({ target }, Math.max(0, Date.now() - eventAt) / 1000),
  };
}

const TIMESTAMP_KEY = '"timestamp":"';

/**
 * The time of the event in a rendered body (`timestamp` of the envelope); undefined when it has none.
 * Found without parsing the body (a delivered body was parsed whole for this, on every delivery):
 * the envelope's third key, after two string values, and a JSON string cannot hold `p":"` unescaped.
 */
export function eventTimeOf(bodyJson: string): number | undefined {
  const start = bodyJson.indexOf(TIMESTAMP_KEY);
  if (start < 0) return undefined;
  const from = start + TIMESTAMP_KEY.length;
  const at = Date.parse(bodyJson.slice(from, bodyJson.indexOf('"', from)));
  return Number.isNaN(at) ? undefined : at;
}
