import type { ClickHouse } from '../../shared/clickhouse.js';

/** Rows an analyst query returns at most, and by default. */
export const SQL_ROW_LIMIT = 10_000;
export const SQL_DEFAULT_ROWS = 1_000;
/** Seconds a query may run. */
export const SQL_TIMEOUT_SECONDS = 30;

export interface SqlResult {
  readonly rows: Record<string, unknown>[];
  /** More rows matched than the limit: the first `limit` are returned. */
  readonly truncated: boolean;
}

/** The SQL is not one read-only SELECT, or ClickHouse refused it (syntax, unknown column, readonly, timeout). */
export class RefusedSql extends Error {}

/**
 * Runs one analyst SELECT read-only. The statement is wrapped as a subquery, so only a SELECT (or
 * WITH … SELECT, UNION) parses, and runs with `readonly=1`, which refuses writes, DDL, SYSTEM and
 * the table functions that reach outside (file, url, s3). Two holes are closed first: chDB runs
 * every statement of a text separated by `;`, so a `;` is refused anywhere but at the end; and a
 * SETTINGS clause inside the query would override `readonly` (even `\x72eadonly` in backquotes),
 * so the statement's parse tree (`EXPLAIN AST`) must have no settings.
 */
export async function readOnlySql(clickhouse: ClickHouse, sql: string, limit = SQL_DEFAULT_ROWS): Promise<SqlResult> {
  const statement = sql.trim().replace(/;+\s*$/, '');
  if (statement === '') throw new RefusedSql('the SQL is empty');
  if (statement.includes(';')) throw new RefusedSql('one statement only: remove the ";" (write a literal semicolon as char(59))');
  const wrapped = `SELECT * FROM (\n${statement}\n)`;
  const settings = `SETTINGS readonly = 1, max_execution_time = ${SQL_TIMEOUT_SECONDS}, output_format_json_quote_64bit_integers = 0`;
  const ast = await refusedOnError(() => clickhouse.query<{ explain: string }>(`EXPLAIN AST ${wrapped}`));
  if (ast.some((line) => /^\s*Set\b/.test(line.explain))) throw new RefusedSql('SETTINGS are not allowed: the SQL path sets readonly, the row limit and the timeout itself');
  const rows = await refusedOnError(() => clickhouse.query<Record<string, unknown>>(`${wrapped}\nLIMIT ${limit + 1}\n${settings}`));
  return { rows: rows.slice(0, limit), truncated: rows.length > limit };
}

/** ClickHouse's refusal of the query (`Code: N. DB::Exception: …`) is the analyst's to fix; anything else (the store down) is not. */
async function refusedOnError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const refused = /Code: \d+|DB::Exception/.test(message) || (error instanceof Error && 'type' in error && typeof error.type === 'string');
    if (!refused) throw error;
    throw new RefusedSql(message.replace(/^.*?DB::Exception: /s, '').split('\n')[0]!.slice(0, 500), { cause: error });
  }
}
