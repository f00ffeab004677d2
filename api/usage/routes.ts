import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountUsage, ensureUsageTable, periodOf, usageByPeriod } from '../../processors/usage/index.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import type { AuthContext } from '../plugins/auth.js';
import { includesConnect, planNamed } from '../../processors/usage/plans.js';
import { mediaAllowance } from '../../processors/usage/addons.js';
import { subscriptionOf } from '../../processors/index.js';
import { usageRange } from './range.js';
import { EntitlementsOut, SubscriptionOut, UsageOut, UsageQuery } from './schemas.js';

/** Partner-issued keys see only their connection's project (spec 5); other keys the account, or the project they name. */
function projectScope(auth: AuthContext, requested: string | undefined): string | null {
  const named = requested === undefined || requested === 'all' ? null : requested;
  if (!auth.partnerKey) return named;
  if (named !== null && named !== auth.projectId) throw gatewayError('not_found');
  return auth.projectId;
}

/**
 * Usage and plan data of the caller's account (spec 4.3): `GET /usage` from ClickHouse, and the
 * plan, its limits and the live counters at `GET /me/entitlements` and `GET /me/subscription`.
 */
export const usageRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { clickhouse, pool } = ctx.clients;
  await ensureUsageTable(clickhouse);

  app.get(
    '/usage',
    {
      config: { scope: 'usage:read' },
      schema: { tags: ['usage'], summary: 'Messages and stored media per day or month', querystring: UsageQuery, response: { 200: UsageOut } },
    },
    async (request) => {
      const range = usageRange(request.query, Date.now());
      const projectId = projectScope(request.auth, request.query.project_id);
      const counted = await usageByPeriod(clickhouse, {
        accountId: request.auth.accountId,
        projectId,
        instanceId: request.query.instance_id ?? null,
        from: range.startMs,
        to: range.endMs,
        granularity: range.granularity,
      });
      const byPeriod = new Map(counted.map((row) => [row.period, row]));
      return {
        from: range.from,
        to: range.to,
        granularity: range.granularity,
        project_id: projectId,
        instance_id: request.query.instance_id ?? null,
        data: range.periods.map((period) => ({
          period_start: period,
          messages: byPeriod.get(period)?.messages ?? 0,
          media_bytes: byPeriod.get(period)?.mediaBytes ?? 0,
        })),
      };
    },
  );

  app.get(
    '/me/entitlements',
    { schema: { tags: ['account'], summary: "The plan's limits and the usage of the current period", response: { 200: EntitlementsOut } } },
    async (request) => {
      const plan = planNamed(request.auth.plan);
      const period = periodOf(Date.now());
      const usage = await accountUsage(pool, request.auth.accountId, period.id);
      return {
        plan: plan.name,
        limits: {
          numbers: plan.numbers,
          messages_per_month: plan.messagesPerMonth,
          media_storage_bytes: plan.mediaStorageBytes,
          media_storage_per_addon_bytes: plan.mediaStoragePerAddonBytes,
          media_storage_allowance_bytes: mediaAllowance(plan.name, ctx.directory.addonsOf(request.auth.accountId)),
          rate_limit: { requests_per_second: plan.rateLimit.rate, burst: plan.rateLimit.burst },
        },
        usage: {
          period_start: period.start.toISOString(),
          period_end: period.end.toISOString(),
          messages: usage.messages,
          media_storage_bytes: usage.mediaBytes,
        },
      };
    },
  );

  app.get(
    '/me/subscription',
    {
      schema: {
        tags: ['account'],
        summary: 'The plan, its current period (calendar month) and the subscription to Pro its payments made',
        response: { 200: SubscriptionOut },
      },
    },
    async (request) => {
      const period = periodOf(Date.now());
      const plan = planNamed(request.auth.plan).name;
      const { subscription, latest } = await subscriptionOf(pool, request.auth.accountId);
      // A lapse or cancellation is the status while it leaves the account without the plan it paid for.
      const ended = subscription?.status === 'lapsed' || subscription?.status === 'canceled' ? subscription.status : undefined;
      return {
        plan,
        status: ended !== undefined && !includesConnect(plan) ? ended : ('active' as const),
        current_period_start: period.start.toISOString(),
        current_period_end: period.end.toISOString(),
        payment:
          subscription === undefined
            ? null
            : {
                attempt_id: subscription.attemptId,
                provider: subscription.provider,
                method: subscription.method,
                status: subscription.status,
                currency: subscription.currency,
                amount: subscription.amount,
                period_end: subscription.periodEnd?.toISOString() ?? null,
                started_at: subscription.startedAt.toISOString(),
                renewals: subscription.renewals,
                renewal_due_at: subscription.renewalDueAt?.toISOString() ?? null,
              },
        latest_attempt: latest === undefined ? null : { attempt_id: latest.attemptId, method: latest.method, status: latest.status, updated_at: latest.updatedAt.toISOString() },
      };
    },
  );
};
