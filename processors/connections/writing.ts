import type { Logger } from 'pino';
import type { Pool } from 'pg';
import { allSettled } from '../../shared/all-settled.js';
import type { Clock } from '../../shared/clock.js';
import type { Kafka, Producer, TopicSerdes } from '../../topics/index.js';
import { startDirectory, type Directory } from '../directory.js';
import { startConnectionsView, type ConnectionsView } from './view.js';
import { ConnectionWriter } from './writer.js';

export interface ConnectionWriting {
  readonly directory: Directory;
  readonly connections: ConnectionsView;
  readonly writer: ConnectionWriter;
  readonly stop: () => Promise<void>;
}

/**
 * The writer of connection transitions with the two views it decides from, each followed from the
 * log (`gw.config`, `gw.connections`): what the API, the sweeper and the payment effects each run.
 */
export async function startConnectionWriting(
  deps: { kafka: Kafka; serdes: TopicSerdes; pool: Pool; producer: Producer; logger: Logger },
  clock: Clock,
): Promise<ConnectionWriting> {
  const directory = await startDirectory(deps);
  const connections = await startConnectionsView(deps);
  const writer = new ConnectionWriter({
    pool: deps.pool,
    kafka: deps.kafka,
    producer: deps.producer,
    prefix: deps.serdes.prefix,
    view: connections.view,
    directory: directory.directory,
    clock,
  });
  return {
    directory: directory.directory,
    connections: connections.view,
    writer,
    stop: async () => {
      await allSettled([connections.stop(), directory.stop()]);
    },
  };
}
