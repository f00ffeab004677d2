import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { readOnlySql, RefusedSql, SQL_DEFAULT_ROWS, SQL_ROW_LIMIT, SQL_TIMEOUT_SECONDS } from '../../processors/analytics/index.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

/**
 * The analysts' read-only SQL path on the gateway's own analytics store (docs/analytics.md): with
 * embedded chDB the API process holds the store, so `gateway sql` cannot open it while the
 * gateway runs and this route is the way in.
 */
export const sqlRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { clickhouse } = ctx.clients;
  app.post(
    '/platform/sql',
    {
      config: { surface: 'platform' as const },
      schema: {
        tags: ['platform'],
        summary: `Run one read-only SELECT on the analytics tables (readonly, at most ${SQL_ROW_LIMIT} rows, ${SQL_TIMEOUT_SECONDS} s)`,
        body: Type.Object(
          {
            sql: Type.String({ minLength: 1, maxLength: 100_000, description: 'One SELECT (or WITH … SELECT); no SETTINGS, no ";" but a last one' }),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SQL_ROW_LIMIT, default: SQL_DEFAULT_ROWS, description: 'Rows returned at most' })),
          },
          { additionalProperties: false, examples: [{ sql: 'SELECT count() FROM message_sends FINAL' }] },
        ),
        response: {
          200: Type.Object({
            data: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The rows, as ClickHouse names their columns' }),
            truncated: Type.Boolean({ description: 'More rows matched than limit; the first limit are in data' }),
          }),
        },
      },
    },
    async (request) => {
      const result = await readOnlySql(clickhouse, request.body.sql, request.body.limit ?? SQL_DEFAULT_ROWS).catch((error: unknown) => {
        if (error instanceof RefusedSql) throw gatewayError('invalid_request', { detail: error.message });
        throw error;
      });
      return { data: result.rows, truncated: result.truncated };
    },
  );
};
