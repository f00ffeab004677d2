import { setTimeout as sleep } from 'node:timers/promises';
import { startDirectory } from '../../processors/directory.js';
import { startConnectionsView } from '../../processors/connections/view.js';
import type { Cipher } from '../../shared/cipher.js';
import type { Logger } from 'pino';
import type { Kafka, Producer, TopicSerdes } from '../../topics/index.js';
import { createDeliver } from './deliver.js';
import { Endpoints } from './endpoint.js';
import { consumeEvents } from './first-attempts.js';
import { EndpointLimiter } from './limiter.js';
import { Load } from './load.js';
import type { DeliveryMetrics } from './metrics.js';
import { createWebhookPoster } from './post.js';
import { consumeRetries } from './retries.js';
import { retrySchedules, tiersOf } from './schedule.js';

/** Deliveries one dispatcher holds at most before it pauses fetching. */
const MAX_IN_FLIGHT = 10_000;
/** How long a stopping dispatcher lets deliveries under way finish; the rest are made again later. */
const STOP_GRACE_MS = 5_000;

/** How webhooks are delivered. */
export interface WebhookOptions {
  /** An attempt that has no answer by then counts as timed out and is retried. */
  readonly timeoutMs: number;
  /** Wait before each retry of account webhooks; its length is the number of retries (spec 6.3: up to 5). Partner webhooks have their own fixed schedule. */
  readonly retryDelaysMs: readonly number[];
  /** Requests in flight to one endpoint at a time, per dispatcher. */
  readonly endpointConcurrency: number;
  /** Deliveries waiting for one endpoint before more are moved to the first retry tier. */
  readonly endpointQueue: number;
}

/** The clients and options the dispatcher uses. */
export interface DispatcherDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly logger: Logger;
  readonly metrics: { readonly deliveries: DeliveryMetrics };
  /** Opens the webhooks' signing secrets. */
  readonly cipher: Cipher;
  readonly config: {
    readonly secretsKey: string;
    readonly webhooks: WebhookOptions;
    readonly outbound: { readonly allowPrivateNetwork: boolean; readonly allowCidrs: readonly string[] };
  };
}

export interface RunningDispatcher {
  stop(): Promise<void>;
}

/**
 * The dispatcher role: delivers public events to account webhooks and partner webhooks (spec 6.4)
 * at least once. First attempts
 * come from `gw.events`, later ones from the retry tiers; both go through one limiter per
 * endpoint, so a slow endpoint holds only its own deliveries.
 */
export async function startDispatcher(clients: DispatcherDeps): Promise<RunningDispatcher> {
  const { config, logger: parent } = clients;
  const logger = parent.child({ component: 'dispatcher' });
  const directory = await startDirectory(clients);
  const connections = await startConnectionsView(clients);
  const poster = createWebhookPoster({
    timeoutMs: config.webhooks.timeoutMs,
    allowPrivateNetwork: config.outbound.allowPrivateNetwork,
    allowRanges: config.outbound.allowCidrs,
  });
  const load = new Load(MAX_IN_FLIGHT);
  const schedules = retrySchedules(config.webhooks.retryDelaysMs);
  const tiers = tiersOf(schedules);
  const limiter = new EndpointLimiter(config.webhooks.endpointConcurrency, config.webhooks.endpointQueue);
  const deliver = createDeliver({
    endpoints: new Endpoints(directory.directory, clients.cipher, connections.view),
    limiter,
    poster,
    producer: clients.producer,
    schedules,
    logger,
    metrics: clients.metrics.deliveries,
  });
  const deps = { kafka: clients.kafka, serdes: clients.serdes, producer: clients.producer, load, logger, deliver, limiter };
  const events = await consumeEvents({ ...deps, directory: directory.directory, connections: connections.view });
  const retries = await consumeRetries(deps, tiers);
  logger.info(
    {
      retries: schedules.account_webhook.retries.length,
      partnerRetries: schedules.partner_webhook.retries.length,
      tiers: tiers.map((tier) => tier.name),
      timeoutMs: config.webhooks.timeoutMs,
    },
    'dispatcher running',
  );

  return {
    async stop() {
      events.intake.stopTaking();
      retries.intake.stopTaking();
      retries.clearTimers();
      await Promise.race([load.idle(), sleep(STOP_GRACE_MS, undefined, { ref: false })]);
      await poster.close();
      await Promise.all([events.intake.close(), retries.intake.close()]);
      await Promise.all([events.stop(), retries.stop()]);
      await Promise.all([directory.stop(), connections.stop()]);
    },
  };
}
