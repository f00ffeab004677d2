import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { mkdirSync } from 'node:fs';
import type { ClickHouseConfig } from './config.js';

/**
 * The analytics store: chDB in-process by default, a ClickHouse server when `CLICKHOUSE_URL` is
 * set. Both run the same SQL; rows come back as objects (JSONEachRow).
 */
export interface ClickHouse {
  readonly kind: ClickHouseConfig['kind'];
  command(sql: string): Promise<void>;
  query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  close(): Promise<void>;
}

export async function createClickHouse(config: ClickHouseConfig): Promise<ClickHouse> {
  return config.kind === 'server' ? serverClickHouse(createClient({ url: config.url })) : embeddedClickHouse(config.path);
}

function serverClickHouse(client: ClickHouseClient): ClickHouse {
  return {
    kind: 'server',
    async command(sql) {
      await client.command({ query: sql });
    },
    async query<T>(sql: string, params?: Record<string, unknown>) {
      const result = await client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      return result.json<T>();
    },
    close: () => client.close(),
  };
}

async function embeddedClickHouse(path: string): Promise<ClickHouse> {
  mkdirSync(path, { recursive: true });
  const { Session } = await import('chdb');
  const session = new Session(path);
  return {
    kind: 'embedded',
    async command(sql) {
      await session.queryAsync(sql);
    },
    async query<T>(sql: string, params?: Record<string, unknown>) {
      const result = params ? await session.queryBindAsync(sql, params, { format: 'JSONEachRow' }) : await session.queryAsync(sql, { format: 'JSONEachRow' });
      const text = result.text().trim();
      return text === '' ? [] : text.split('\n').map((line) => JSON.parse(line) as T);
    },
    async close() {
      session.close();
    },
  };
}
