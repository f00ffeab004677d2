import type { Pool } from 'pg';
import type { ConnectorKind } from '../schemas/records.js';
import type { ClickHouse } from '../shared/clickhouse.js';
import type { Directory } from '../processors/directory.js';
import type { ConnectionsView } from '../processors/connections/view.js';
import type { ConnectionWriter } from '../processors/connections/writer.js';
import type { Clock } from '../shared/clock.js';
import type { Kafka, Producer, TopicSerdes } from '../topics/index.js';

/** The clients and options the routes use, built once per process by the composition root. */
export interface ApiClients {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: Pool;
  readonly clickhouse: ClickHouse;
  readonly config: {
    /** `development` serves the sandbox's controls and lets numbers be created on it; `production` does neither. */
    readonly mode: 'development' | 'production';
    /** How long a rotated API key keeps working. */
    readonly keyRotationGraceMs: number;
    readonly webhooks: { readonly retryDelaysMs: readonly number[] };
    readonly outbound: { readonly allowPrivateNetwork: boolean; readonly allowCidrs: readonly string[] };
    /** The connector of numbers created without one. */
    readonly defaultConnector: ConnectorKind;
  };
}

/** What route plugins receive: the process's clients and the in-memory views of config and connections. */
export interface ApiContext {
  readonly clients: ApiClients;
  readonly directory: Directory;
  /** Partner connections (gw.connections), for the checks made on every call of a partner-issued key. */
  readonly connections: ConnectionsView;
  /** The only writer of connection transitions (`gw.connections`). */
  readonly connectionWriter: ConnectionWriter;
  /** Time of the Connect rules (session and code lifetimes, e-mail limits); tests move it. */
  readonly clock: Clock;
}

/** Options of every route plugin: `app.register(routes, { ctx })`. */
export interface RouteOptions {
  readonly ctx: ApiContext;
}
