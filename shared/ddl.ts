import type { Pool } from 'pg';

/**
 * Runs idempotent DDL in one transaction under an advisory lock, so processes starting together
 * do not race on `CREATE ... IF NOT EXISTS`. `searchPath` makes unqualified names land in a schema.
 */
export async function runDdl(pool: Pool, lock: string, statements: readonly string[], searchPath?: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ddl:${lock}`]);
    if (searchPath !== undefined) await client.query(`SET LOCAL search_path TO ${searchPath}`);
    for (const statement of statements) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}
