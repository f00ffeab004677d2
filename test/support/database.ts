import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../stack/config.js';

/** A fresh Postgres database of the running stack for one test file, without the rest of the stack. */
export interface TestDatabase {
  readonly pool: pg.Pool;
  /** For processes the test spawns. */
  readonly url: string;
  dispose(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = new URL(loadConfig().databaseUrl);
  const database = `gateway_t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${database}`);
  const url = new URL(base);
  url.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  // pool.end() resolves before its idle clients' sockets have closed: the DROP below may terminate
  // one of them, which is expected then, and a failure like any other before.
  let disposing = false;
  pool.on('error', (err) => {
    if (!disposing) throw err;
  });
  return {
    pool,
    url: url.toString(),
    async dispose() {
      disposing = true;
      await pool.end();
      await run(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}
