import type { ClickHouseClient } from '@clickhouse/client';
import { mkdirSync } from 'node:fs';
import type { Session } from 'chdb';

/** Where the analytics store lives: a ClickHouse server, or chDB in-process on a data folder. */
export type ClickHouseOptions =
  | { readonly kind: 'server'; readonly url: string }
  | { readonly kind: 'embedded'; readonly path: string };

/**
 * The analytics store: chDB in-process by default, a ClickHouse server when `CLICKHOUSE_URL` is
 * set. Both run the same SQL; rows come back as objects (JSONEachRow).
 */
export interface ClickHouse {
  readonly kind: ClickHouseOptions['kind'];
  command(sql: string): Promise<void>;
  query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  close(): Promise<void>;
}

export function createClickHouse(config: ClickHouseOptions): ClickHouse {
  return config.kind === 'server' ? serverClickHouse(config.url) : embeddedClickHouse(config.path);
}

/** The server's client library is loaded on first use, as chDB is: a process that never queries does not load it. */
function serverClickHouse(url: string): ClickHouse {
  let client: Promise<ClickHouseClient> | undefined;
  const open = () => (client ??= import('@clickhouse/client').then(({ createClient }) => createClient({ url })));
  return {
    kind: 'server',
    async command(sql) {
      await (await open()).command({ query: sql });
    },
    async query<T>(sql: string, params?: Record<string, unknown>) {
      const result = await (await open()).query({ query: sql, query_params: params, format: 'JSONEachRow' });
      return result.json<T>();
    },
    async close() {
      if (client) await (await client).close();
    },
  };
}

/**
 * chDB keeps an exclusive lock on its data folder, so one process owns it: the session opens on
 * first use, and processes that never query (a processor-only role) never take the lock. Several
 * gateway processes on one machine need a ClickHouse server (`CLICKHOUSE_URL`).
 */
function embeddedClickHouse(path: string): ClickHouse {
  let session: Promise<Session> | undefined;
  const open = () =>
    (session ??= import('chdb').then(({ Session }) => {
      mkdirSync(path, { recursive: true });
      try {
        return new Session(path);
      } catch (error) {
        throw new Error(
          `embedded ClickHouse (chDB) cannot open ${path}: another process holds it, most likely a running gateway. ` +
            'Stop that process, or set CLICKHOUSE_URL to a ClickHouse server every process shares.',
          { cause: error },
        );
      }
    }));
  return {
    kind: 'embedded',
    async command(sql) {
      await (await open()).queryAsync(sql);
    },
    async query<T>(sql: string, params?: Record<string, unknown>) {
      const s = await open();
      const result = params ? await s.queryBindAsync(sql, params, { format: 'JSONEachRow' }) : await s.queryAsync(sql, { format: 'JSONEachRow' });
      const text = result.text().trim();
      return text === '' ? [] : text.split('\n').map((line) => JSON.parse(line) as T);
    },
    async close() {
      if (session) (await session).close();
    },
  };
}
