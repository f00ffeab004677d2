import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { mediaAllowance } from '../../processors/usage/addons.js';
import { planNamed, plans, type Plan } from '../../processors/usage/plans.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

const PlanLimits = Type.Object({
  numbers: Type.Integer({ description: 'Numbers the account may have' }),
  messages_per_month: Type.Integer({ description: 'Sends included per calendar month (UTC)' }),
  media_storage_bytes: Type.Integer({ description: 'Stored media included' }),
  media_storage_per_addon_bytes: Type.Integer({ description: 'Stored media each add-on adds; 0 where the plan takes none' }),
  rate_limit: Type.Object({ requests_per_second: Type.Integer(), burst: Type.Integer() }),
});

const PlanOut = Type.Object({
  plan: Type.String({ description: 'free, pro or scale' }),
  limits: PlanLimits,
  media_storage_allowance_bytes: Type.Integer({ description: "The plan's stored media plus what the add-ons held add" }),
  plans: Type.Array(Type.Object({ plan: Type.String(), current: Type.Boolean(), limits: PlanLimits }), { description: 'Every plan, to compare' }),
});

const limitsOf = (plan: Plan) => ({
  numbers: plan.numbers,
  messages_per_month: plan.messagesPerMonth,
  media_storage_bytes: plan.mediaStorageBytes,
  media_storage_per_addon_bytes: plan.mediaStoragePerAddonBytes,
  rate_limit: { requests_per_second: plan.rateLimit.rate, burst: plan.rateLimit.burst },
});

/**
 * `GET /me/plan`: the account's plan, its limits with the add-ons counted, and the other plans to
 * compare. Changing plan is a payment (Pro by checkout, spec 4.5), not a write of this route.
 */
export const planRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/me/plan',
    { config: { partnerKeys: false }, schema: { tags: ['account'], summary: "The account's plan, its limits and the plans to compare", response: { 200: PlanOut } } },
    async (request) => {
      const account = ctx.directory.accounts.get(request.auth.accountId);
      if (account === undefined) throw gatewayError('unauthorized');
      const current = planNamed(account.plan);
      return {
        plan: current.name,
        limits: limitsOf(current),
        media_storage_allowance_bytes: mediaAllowance(account.plan, ctx.directory.addonsOf(account.id)),
        plans: Object.values(plans).map((p) => ({ plan: p.name, current: p.name === current.name, limits: limitsOf(p) })),
      };
    },
  );
};
