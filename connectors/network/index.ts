import type { Clients } from '../../stack/clients.js';
import { createCipher } from '../../stack/cipher.js';
import { PendingReceipts, SandboxNetwork } from '../sandbox/index.js';
import type { OtpOpener } from './connector.js';
import type { MediaSink } from './media-sink.js';
import { ConnectorRunner } from './runner.js';

export type {
  NetworkConnector,
  NumberSession,
  SendResult,
  SessionEvents,
  SessionFact,
  StateFact,
  PairingFact,
  StatusFact,
  InboundFact,
  GroupFact,
  OtpOpener,
} from './connector.js';
export type { MediaOwner, MediaSink } from './media-sink.js';
export { sendMetrics, type SendMetrics } from './metrics.js';
export type { SandboxControls } from './runner.js';

export interface ConnectorRoleOptions {
  /** Where received media goes (the S3 media store). Absent: media messages arrive with media null. */
  readonly media?: MediaSink;
  /** Opens OTP codes; by default the gateway's cipher under `SECRETS_KEY`. */
  readonly otp?: OtpOpener;
  /** The sandbox network; one is made when absent (tests pass theirs to look inside). */
  readonly sandbox?: SandboxNetwork;
}

export interface ConnectorRole {
  /** The partitions (of every connector topic) this member owns now. */
  ownedPartitions(): number[];
  stop(): Promise<void>;
}

/** Starts the `connector` role: a member of the connector group running the sessions of its numbers. */
export async function startConnectorRole(clients: Clients, options: ConnectorRoleOptions = {}): Promise<ConnectorRole> {
  const logger = clients.logger.child({ role: 'connector' });
  if (!options.sandbox && !options.media) logger.warn('no media sink: received media arrive without their files');
  const sandbox =
    options.sandbox ??
    new SandboxNetwork({ logger, receipts: new PendingReceipts(clients.pool), media: options.media, otp: options.otp ?? createCipher(clients.config.secretsKey) });
  await sandbox.ensureSchema();
  const runner = new ConnectorRunner({
    kafka: clients.kafka,
    serdes: clients.serdes,
    producer: clients.producer,
    pool: clients.pool,
    logger,
    connectors: [sandbox],
    controls: sandbox,
    metrics: clients.metrics.sends,
  });
  await runner.start();
  return { ownedPartitions: () => runner.ownedPartitions(), stop: () => runner.stop() };
}
