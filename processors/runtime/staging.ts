import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { ReplaySwap } from './projection.js';
import { quoteIdent } from './store.js';

/**
 * Staging tables of a replay: a handler COPYs its rows into an UNLOGGED table of the replay's
 * schema (about a sixth of what an upsert costs Postgres per row) and the projection merges them
 * into its tables, set-based, once at the swap. Postgres empties unlogged tables when it recovers
 * from a crash while the offsets stay: the merge at the swap refuses a schema whose staged rows a
 * restart may have lost.
 */

/** Marks when staging began, against which the final merge checks that Postgres has not restarted since. */
export const STAGING_DDL = [
  `CREATE TABLE IF NOT EXISTS _staging_started (postmaster_started timestamptz NOT NULL)`,
  `INSERT INTO _staging_started SELECT pg_postmaster_start_time() WHERE NOT EXISTS (SELECT 1 FROM _staging_started)`,
];

/** The tables of `STAGING_DDL`, to drop with the projection's staging tables once merged. */
export const STAGING_TABLES = ['_staging_started'];

/** How a staged item gives one column's value; undefined is NULL. */
export type ColumnOf<T> = (item: T) => unknown;

/**
 * COPYs items into a staging table of the transaction's schema (its search path), each column's
 * value read from the item by its accessor: a replay stages every record, and a row object per
 * record (then its COPY line) is most of what the catch-up spends collecting garbage.
 */
export async function copyStaged<T>(tx: PoolClient, table: string, columns: ReadonlyMap<string, ColumnOf<T>>, items: readonly T[]): Promise<void> {
  if (items.length === 0) return;
  const copy = tx.query(copyFrom(`COPY ${quoteIdent(table)} (${[...columns.keys()].map(quoteIdent).join(', ')}) FROM STDIN`));
  await pipeline(Readable.from(copyChunks(items, [...columns.values()])), copy);
}

/** At the swap: refuses staged rows a restart of Postgres may have emptied (unlogged tables are reset by crash recovery). */
export async function checkStagingKept(tx: PoolClient): Promise<void> {
  const { rows } = await tx.query<{ restarted: boolean }>(`SELECT pg_postmaster_start_time() > postmaster_started AS restarted FROM _staging_started`);
  if (rows[0]?.restarted !== false) throw new Error('Postgres restarted during the replay and may have lost its staged rows: replay again');
}

/**
 * Fills empty tables by `load` with none of their indexes, keys included, then builds them, each
 * table's on a connection of its own: one sort per index after a bulk insert costs a fraction of
 * keeping it up row by row. `load` must write no two rows with the same key (nothing checks it
 * before the keys are built, which then fail).
 */
export async function intoEmptyTables(swap: ReplaySwap, tables: readonly string[], load: () => Promise<void>): Promise<void> {
  const builds = new Map<string, string[]>(tables.map((table) => [table, []]));
  // A key dropped is built again: a table named otherwise than its catalogue's name is refused before anything is dropped.
  const buildsOf = (table: string) => {
    const statements = builds.get(table);
    if (statements === undefined) throw new Error(`${table} is none of ${tables.join(', ')}`);
    return statements;
  };
  await swap.step(async (tx) => {
    for (const table of tables) {
      const { rows } = await tx.query<{ filled: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${quoteIdent(table)}) AS filled`);
      if (rows[0]?.filled) throw new Error(`${table} is not empty: it cannot be loaded without its keys`);
    }
    const { rows: keys } = await tx.query<{ table_name: string; name: string; definition: string }>(
      `SELECT conrelid::regclass::text AS table_name, conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
       WHERE conrelid = ANY($1::text[]::regclass[]) AND contype IN ('p', 'u')`,
      [tables],
    );
    const { rows: indexes } = await tx.query<{ table_name: string; name: string; definition: string }>(
      `SELECT i.indrelid::regclass::text AS table_name, i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i
       WHERE i.indrelid = ANY($1::text[]::regclass[]) AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
      [tables],
    );
    for (const { table_name } of [...keys, ...indexes]) buildsOf(table_name);
    for (const key of keys) {
      await tx.query(`ALTER TABLE ${key.table_name} DROP CONSTRAINT ${quoteIdent(key.name)}`);
      buildsOf(key.table_name).push(`ALTER TABLE ${key.table_name} ADD CONSTRAINT ${quoteIdent(key.name)} ${key.definition}`);
    }
    for (const index of indexes) {
      await tx.query(`DROP INDEX ${index.name}`);
      buildsOf(index.table_name).push(index.definition);
    }
  });
  await load();
  await swap.together(
    [...builds.values()].map((statements) => async (tx) => {
      await tx.query(`SET LOCAL maintenance_work_mem TO '256MB'`);
      for (const statement of statements) await tx.query(statement);
    }),
  );
}

/** How a swap's work is cut into parts that touch different rows: this part of `of`. */
export interface SwapPart {
  readonly index: number;
  readonly of: number;
}

/** The parts a swap cuts its largest statements into: Postgres runs each on one core, and the development machine has two. */
export const SWAP_PARTS = 2;

/** Each part of `SWAP_PARTS`, for `ReplaySwap.together`. */
export function swapParts(): SwapPart[] {
  return Array.from({ length: SWAP_PARTS }, (_, index) => ({ index, of: SWAP_PARTS }));
}

/** SQL true for the rows of `part`, cut by a hash of `key` (an expression): the rows of one key fall in one part. */
export function inPart(key: string, part: SwapPart): string {
  return `mod(hashtext(${key})::bigint + 2147483648, ${part.of}) = ${part.index}`;
}

/** Lines of COPY's text format, a chunk of rows at a time. */
export function* copyChunks<T>(items: readonly T[], columns: readonly ColumnOf<T>[], rowsPerChunk = 2_000): Generator<string> {
  for (let from = 0; from < items.length; from += rowsPerChunk) {
    // One string built by appending: arrays per row cost twice as much.
    let text = '';
    for (let n = from; n < Math.min(items.length, from + rowsPerChunk); n++) {
      const item = items[n]!;
      for (let i = 0; i < columns.length; i++) {
        if (i > 0) text += '\t';
        text += copyField(columns[i]!(item));
      }
      text += '\n';
    }
    yield text;
  }
}

function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return escapeCopy(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return escapeCopy(arrayLiteral(value));
  throw new TypeError(`cannot stage a value of type ${typeof value}`);
}

const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const COPY_SPECIAL = /[\\\n\r\t]/;

function escapeCopy(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!) : text;
}

/** A one-dimensional array literal of text elements, every element quoted. */
function arrayLiteral(values: readonly unknown[]): string {
  const elements = values.map((value) => {
    if (value === null || value === undefined) return 'NULL';
    if (typeof value !== 'string') throw new TypeError(`cannot stage an array of ${typeof value}`);
    return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  });
  return `{${elements.join(',')}}`;
}
