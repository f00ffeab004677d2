import pg from 'pg';
import { reason } from './health.js';
import type { Log, ServiceStatus } from './processes.js';

export const REGISTRY_DATABASE = 'gateway_registry';
const DATABASES = ['gateway', 'gateway_test', REGISTRY_DATABASE];

export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string;
  readonly database?: string;
}

/** The server and user of DATABASE_URL, or the machine's own server with trust auth. */
export function postgresServer(): PostgresServer {
  const raw = process.env.DATABASE_URL?.trim();
  if (!raw) return { host: '127.0.0.1', port: 5432, user: 'postgres' };
  const url = new URL(raw);
  return {
    host: url.hostname || '127.0.0.1',
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username) || 'postgres',
    password: url.password ? decodeURIComponent(url.password) : undefined,
    database: decodeURIComponent(url.pathname.slice(1)) || undefined,
  };
}

/** The server runs already; this creates the gateway's databases (and DATABASE_URL's) if missing. */
export async function ensureDatabases(log: Log): Promise<void> {
  await withClient(async (client, server) => {
    for (const name of await missing(client, server)) {
      try {
        await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
        log(`postgres: created database ${name}`);
      } catch (error) {
        if ((error as { code?: string }).code !== '42P04') throw error; // created meanwhile by someone else
      }
    }
  });
}

export async function postgresStatus(): Promise<ServiceStatus> {
  const server = postgresServer();
  const address = `postgres://${server.user}@${server.host}:${server.port}`;
  try {
    const absent = await withClient((client) => missing(client, server));
    return absent.length === 0 ? { up: true, address } : { up: true, address, detail: `missing databases: ${absent.join(', ')}` };
  } catch (error) {
    return { up: false, address, detail: reason(error) };
  }
}

async function missing(client: pg.Client, server: PostgresServer): Promise<string[]> {
  const wanted = [...new Set([...DATABASES, ...(server.database ? [server.database] : [])])];
  const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY($1)', [wanted]);
  return wanted.filter((name) => !rows.some((row) => row.datname === name));
}

async function withClient<T>(fn: (client: pg.Client, server: PostgresServer) => Promise<T>): Promise<T> {
  const server = postgresServer();
  const client = new pg.Client({ ...server, database: 'postgres', connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`postgres at ${server.host}:${server.port} is not reachable as ${server.user}: ${reason(error)}`);
  }
  try {
    return await fn(client, server);
  } finally {
    await client.end();
  }
}
