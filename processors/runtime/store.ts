import type { Pool, PoolClient } from 'pg';
import type { Projection } from './projection.js';

const OFFSETS_DDL = `CREATE TABLE IF NOT EXISTS _offsets (
  topic text NOT NULL,
  partition integer NOT NULL,
  next_offset bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (topic, partition)
)`;

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Creates the projection's schema, tables and offsets table if they are missing. */
export async function ensureProjectionSchema(pool: Pool, projection: Projection, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`ddl:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    for (const statement of [OFFSETS_DDL, ...projection.ddl]) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** The next offset to apply on each partition of a topic, as committed with the projection. */
export async function storedOffsets(db: Pool | PoolClient, schema: string, topic: string): Promise<Map<number, number>> {
  const { rows } = await db.query<{ partition: number; next_offset: string }>(
    `SELECT partition, next_offset FROM ${quoteIdent(schema)}._offsets WHERE topic = $1`,
    [topic],
  );
  return new Map(rows.map((row) => [row.partition, Number(row.next_offset)]));
}

/** The key of the advisory lock that orders live batches (shared) against a replay swap (exclusive). */
export function projectionLockKey(projection: Projection): string {
  return `projection:${projection.name}`;
}
