import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Kafka, Producer, TopicSerdes } from '../../topics/index.js';
import type { NetworkConnector } from './connector.js';
import type { SendMetrics } from './metrics.js';
import { ConnectorRunner } from './runner.js';
import type { OpenedOtpCodes } from './otp-keys.js';

export type {
  Addressed,
  ConnectorCommands,
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
  CallFact,
  OtpOpener,
} from './connector.js';
export type { MediaOwner, MediaSink } from './media-sink.js';
export { QueryRefused, type AnswerOf, type SessionQuery, type QueryErrorCode } from './query.js';
export { NumberAsker, type AskedNumber, type NumberAskerDeps } from './asker.js';
export { sendMetrics, type SendMetrics } from './metrics.js';
export { OtpKeys, OpenedOtpCodes, DEFAULT_OTP_LIFETIME_MS, type OtpSealer } from './otp-keys.js';

export interface ConnectorRoleOptions {
  /** The networks whose sessions this worker runs, one connector per kind. */
  readonly connectors: readonly NetworkConnector[];
  /** The OTP codes the connectors' sessions open (the same object): loaded before a send, destroyed after. */
  readonly otp: OpenedOtpCodes;
}

/** The clients and options the connector role uses. */
export interface ConnectorClients {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly metrics: { readonly sends: SendMetrics };
}

export interface ConnectorRole {
  /** The partitions (of every connector topic) this member owns now. */
  ownedPartitions(): number[];
  stop(): Promise<void>;
}

/** Starts the `connector` role: a member of the connector group running the sessions of its numbers. */
export async function startConnectorRole(clients: ConnectorClients, options: ConnectorRoleOptions): Promise<ConnectorRole> {
  const runner = new ConnectorRunner({
    kafka: clients.kafka,
    serdes: clients.serdes,
    producer: clients.producer,
    pool: clients.pool,
    logger: clients.logger.child({ role: 'connector' }),
    connectors: options.connectors,
    otp: options.otp,
    metrics: clients.metrics.sends,
  });
  await runner.start();
  return { ownedPartitions: () => runner.ownedPartitions(), stop: () => runner.stop() };
}

