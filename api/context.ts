import type { Pool } from 'pg';
import type { ClickHouse } from '../shared/clickhouse.js';
import type { Directory } from '../processors/directory.js';
import type { Kafka, Producer, TopicSerdes } from '../topics/index.js';

/** The clients and options the routes use, built once per process by the composition root. */
export interface ApiClients {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly producer: Producer;
  readonly pool: Pool;
  readonly clickhouse: ClickHouse;
  readonly config: {
    /** How long a rotated API key keeps working. */
    readonly keyRotationGraceMs: number;
    readonly webhooks: { readonly retryDelaysMs: readonly number[] };
    readonly outbound: { readonly allowPrivateNetwork: boolean; readonly allowCidrs: readonly string[] };
  };
}

/** What route plugins receive: the process's clients and the in-memory directory of accounts and keys. */
export interface ApiContext {
  readonly clients: ApiClients;
  readonly directory: Directory;
}

/** Options of every route plugin: `app.register(routes, { ctx })`. */
export interface RouteOptions {
  readonly ctx: ApiContext;
}
