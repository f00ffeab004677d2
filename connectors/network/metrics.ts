import { Histogram, type Registry } from 'prom-client';

export interface SendMetrics {
  /** The network took a send the API accepted at `acceptedAt`. */
  sent(acceptedAt: number): void;
}

export function sendMetrics(registry: Registry): SendMetrics {
  const latency = new Histogram({
    name: 'gateway_send_latency_seconds',
    help: 'From the 202 of a send (its command written) to the network taking it (status sent).',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return { sent: (acceptedAt) => latency.observe(Math.max(0, Date.now() - acceptedAt) / 1000) };
}
