import { createHmac } from 'node:crypto';
import path from 'node:path';
import { repoRoot } from '../shared/repo-root.js';
import { allSettled } from '../shared/all-settled.js';
import { SandboxPayments } from '../connectors/payments/sandbox.js';
import { StripePayments } from '../connectors/payments/stripe.js';
import { ensurePaymentEffectsSchema } from '../connectors/payments/effects-projection.js';
import { NumberAsker, OtpKeys } from '../connectors/network/index.js';
import { NetworkChecks } from '../api/contacts/network-checks.js';
import { LiveNumbers } from '../api/live/numbers.js';
import type { Directory } from '../processors/directory.js';
import type { ConnectionsView } from '../processors/connections/view.js';
import type { ConnectionWriter } from '../processors/connections/writer.js';
import { startConnectionWriting } from '../processors/connections/writing.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { createMediaConverter, ffmpegVersion } from '../connectors/media/index.js';
import { planNamed } from '../processors/usage/plans.js';
import { buildServer, type ApiServer } from '../api/server.js';
import { ensureApiTables } from '../api/storage.js';
import { StreamHub } from '../api/streams/index.js';
import { lastInstanceReader } from '../processors/conversations/index.js';
import { projectionsFor } from '../processors/index.js';
import { ensureProjectionSchema } from '../processors/runtime/store.js';
import { standingReader } from '../processors/audience/index.js';
import type { Cipher } from '../shared/cipher.js';
import type { Clients } from './clients.js';
import { checkDependencies } from './readiness.js';

export interface RunningApi {
  readonly app: ApiServer;
  readonly directory: Directory;
  readonly connections: ConnectionsView;
  readonly connectionWriter: ConnectionWriter;
  readonly cipher: Cipher;
  readonly streams: StreamHub;
  stop(): Promise<void>;
}

/** Builds the API of this process: its tables, the in-memory directory, the server; listens unless told not to. */
export async function startApi(clients: Clients, options: { listen: boolean; clock?: Clock }): Promise<RunningApi> {
  await ensureApiTables(clients.pool);
  // The API reads these projections; their (empty) tables exist before any processor has run.
  for (const projection of projectionsFor(clients, 'live').values()) {
    await ensureProjectionSchema(clients.pool, projection, projection.name);
  }
  await ensurePaymentEffectsSchema(clients.pool);
  const clock = options.clock ?? systemClock;
  const { directory, connections, writer: connectionWriter, stop: stopConnectionWriting } = await startConnectionWriting(clients, clock);
  const converter = createMediaConverter({
    ffmpegPath: clients.config.media.ffmpegPath,
    concurrency: clients.config.media.conversions,
    timeoutMs: clients.config.media.conversionTimeoutMs,
    onUnavailable: (err) => clients.logger.error({ err }, 'a voice note could not be converted: install ffmpeg (apt-get install ffmpeg) or set FFMPEG_PATH'),
  });
  // Not awaited: the API serves everything else without ffmpeg; voice notes answer 503 until it is there.
  ffmpegVersion(clients.config.media.ffmpegPath).then(
    (version) => clients.logger.debug({ version }, 'ffmpeg found for voice notes'),
    (err: unknown) => clients.logger.warn({ err }, 'ffmpeg is not available: voice notes will answer 503 until it is installed (apt-get install ffmpeg) or FFMPEG_PATH names it'),
  );
  const streams = await StreamHub.start(clients, { bufferPerPartition: clients.config.streams.bufferPerPartition });
  const asker = await NumberAsker.start(clients);
  const lastInstance = lastInstanceReader(clients.pool);
  const otpKeys = new OtpKeys(clients.pool);
  await otpKeys.ensureSchema();
  const app = await buildServer({
    logger: clients.logger,
    checkDependencies: () => checkDependencies(clients),
    ctx: { clients, directory, connections, connectionWriter, clock },
    rateLimitFor: (plan) => planNamed(plan).rateLimit,
    trustProxy: clients.config.trustProxy,
    widgetDir: path.join(repoRoot, 'dist', 'widget'),
    panel: { dir: path.join(repoRoot, 'dist', 'panel'), csrfKey: createHmac('sha256', clients.config.secretsKey).update('panel-csrf').digest('hex') },
    publicBaseUrl: clients.config.media.publicBaseUrl,
    messages: {
      cipher: clients.cipher,
      otp: otpKeys,
      media: { store: clients.media, http: clients.http, converter },
      standing: standingReader(clients.pool),
      lastInstanceFor: lastInstance,
    },
    contacts: { network: new NetworkChecks({ pool: clients.pool, asker }) },
    groups: { asker, lastInstanceFor: lastInstance },
    conversations: { signMediaUrl: (mediaId) => clients.mediaLinks.mediaUrl(mediaId) },
    media: { store: clients.media, links: clients.mediaLinks },
    streams: { hub: streams, heartbeatMs: clients.config.streams.heartbeatMs },
    connect: {
      service: clients.config.service,
      mailer: clients.mailer,
      payments:
        clients.config.payments.provider === 'stripe'
          ? new StripePayments(clients.pool, clients.producer, clients.config.payments.stripe)
          : new SandboxPayments(clients.pool, clients.producer),
      codeKey: createHmac('sha256', clients.config.secretsKey).update('connect-email-codes').digest('hex'),
    },
    metrics: {
      registry: clients.metrics.registry,
      http: clients.metrics.http,
      onApiPort: clients.config.metricsPort === 0,
      token: clients.config.metricsToken,
    },
    numbers: new LiveNumbers({ pool: clients.pool, asker }),
  });
  if (options.listen) await app.listen({ host: clients.config.host, port: clients.config.port });
  return {
    app,
    directory,
    connections,
    connectionWriter,
    cipher: clients.cipher,
    streams,
    // The server first (it ends the open streams); then the readers at once, as each waits out its
    // fetch in flight (up to the group timing's wait) before it leaves its group.
    async stop() {
      await app.close();
      await allSettled([asker.stop(), streams.stop(), stopConnectionWriting()]);
    },
  };
}
