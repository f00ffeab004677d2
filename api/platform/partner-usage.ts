import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { projectsUsageByPeriod } from '../../processors/usage/index.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { usageRange } from '../usage/range.js';
import { UsageOut, UsageQuery } from '../usage/schemas.js';

const config = { surface: 'platform' as const };
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const { project_id: _project, instance_id: _instance, ...rangeFields } = UsageQuery.properties;
const { project_id: _projectOut, instance_id: _instanceOut, ...usageFields } = UsageOut.properties;

/**
 * A partner's usage: the sends and media of the projects its connections link now (every status
 * but revoked), per day or month, from the same ClickHouse table as `GET /usage`.
 */
export const partnerUsageRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/platform/partners/:id/usage',
    {
      config,
      schema: {
        tags: ['platform'],
        summary: "The partner's usage: messages and stored media per period of its connected accounts",
        params: Params,
        querystring: Type.Object(rangeFields),
        response: {
          200: Type.Object({
            partner_id: Type.String(),
            connections: Type.Integer({ description: 'Connections counted: those linked to a project now' }),
            ...usageFields,
          }),
        },
      },
    },
    async (request) => {
      if (!ctx.directory.partners.has(request.params.id)) throw gatewayError('not_found');
      const range = usageRange(request.query, Date.now());
      const linked = ctx.connections
        .ofPartner(request.params.id)
        .flatMap((c) => (c.to_status !== 'revoked' && c.account_id !== null && c.project_id !== null ? [{ accountId: c.account_id, projectId: c.project_id }] : []));
      const counted = await projectsUsageByPeriod(ctx.clients.clickhouse, { projects: linked, from: range.startMs, to: range.endMs, granularity: range.granularity });
      const byPeriod = new Map(counted.map((row) => [row.period, row]));
      return {
        partner_id: request.params.id,
        connections: linked.length,
        from: range.from,
        to: range.to,
        granularity: range.granularity,
        data: range.periods.map((period) => ({
          period_start: period,
          messages: byPeriod.get(period)?.messages ?? 0,
          media_bytes: byPeriod.get(period)?.mediaBytes ?? 0,
        })),
      };
    },
  );
};
