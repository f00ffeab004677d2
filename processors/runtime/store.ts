import type { Pool, PoolClient } from 'pg';
import { runDdl } from '../../shared/ddl.js';
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
  await runDdl(pool, schema, [`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`, OFFSETS_DDL, ...projection.ddl], quoteIdent(schema));
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
export function projectionLockKey(projection: Pick<Projection, 'name'>): string {
  return `projection:${projection.name}`;
}
