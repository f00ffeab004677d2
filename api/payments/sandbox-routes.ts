import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import { Type } from '@sinclair/typebox';
import { effectApplied } from '../../connectors/payments/effects-projection.js';
import type { PaymentOutcome } from '../../connectors/payments/provider.js';
import { MAX_ADVANCE_DAYS, type SandboxPayments, type SandboxSubscription } from '../../connectors/payments/sandbox.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

/**
 * How long an answer waits for the payments processor to apply what it did, so that the account
 * it answers about is already Pro (or Free); past it, the answer goes and the effect follows.
 */
const EFFECT_WAIT_MS = 10_000;

const RenewalOutcome = Type.Union([Type.Literal('paid'), Type.Literal('failed')], {
  description: 'What the saved payment method does at a renewal: paid (the period moves on 30 days) or failed (the subscription lapses)',
});

const SubscriptionOut = Type.Object({
  attempt_id: Type.String({ description: 'The paid attempt that is the subscription' }),
  status: Type.String({ description: 'paid, or lapsed' }),
  period_end: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  clock: Type.String({ format: 'date-time', description: "The account's time on its test clock (real time until the clock is advanced)" }),
  renewals: Type.Array(Type.String(), { description: 'What each renewal did, in order: paid or lapsed' }),
});

/**
 * The sandbox's payment routes. `confirm` is what the sandbox payment form posts, as Stripe.js
 * confirms a payment with its client secret: the secret is the credential, so any origin may post
 * it (CORS `*`). Each route writes the payment's record on `gw.payments`; the payments processor
 * applies it (a paid attempt makes the account Pro and moves its connections on, a lapse makes it
 * Free and suspends them, as for Stripe's events), and the answer waits for that, up to
 * EFFECT_WAIT_MS. `renew` and `advance` are the processor's test mode, run by the account itself
 * (a key with `sandbox:write`): a renewal now, or its test clock moved on.
 */
export const sandboxPaymentRoutes: FastifyPluginAsyncTypebox<RouteOptions & { payments: SandboxPayments }> = async (app, { ctx, payments }) => {
  app.post(
    '/sandbox/payments/confirm',
    {
      config: { public: true },
      schema: {
        tags: ['sandbox'],
        summary: 'Confirm a sandbox payment with its client secret: paid, failed, or processing (being confirmed)',
        body: Type.Object(
          {
            client_secret: Type.String({ maxLength: 200 }),
            outcome: Type.Optional(Type.Union([Type.Literal('paid'), Type.Literal('failed'), Type.Literal('processing')])),
          },
          { additionalProperties: false, examples: [{ client_secret: 'sandbox_pi_…_secret_…', outcome: 'paid' }] },
        ),
        response: { 200: Type.Object({ attempt_id: Type.String(), status: Type.String() }) },
      },
    },
    async (request, reply) => {
      reply.header('Access-Control-Allow-Origin', '*');
      const outcome = await payments.confirm(request.body.client_secret, request.body.outcome ?? 'paid', ctx.clock());
      if (outcome === undefined) throw gatewayError('not_found');
      await appliedBy(outcome, request.log);
      return { attempt_id: outcome.attempt.attemptId, status: outcome.attempt.status };
    },
  );

  app.post(
    '/sandbox/payments/renew',
    {
      config: { scope: 'sandbox:write' },
      schema: {
        tags: ['sandbox'],
        summary: "Renew the account's paid subscription now: paid moves its period on 30 days, failed lapses it (Free, connections suspended)",
        body: Type.Optional(Type.Object({ outcome: Type.Optional(RenewalOutcome) }, { additionalProperties: false, examples: [{ outcome: 'failed' }] })),
        response: { 200: SubscriptionOut },
      },
    },
    async (request) => {
      const subscription = await payments.renew(request.auth.accountId, request.body?.outcome ?? 'paid', ctx.clock());
      return applied(subscription, request.log);
    },
  );

  app.post(
    '/sandbox/payments/advance',
    {
      config: { scope: 'sandbox:write' },
      schema: {
        tags: ['sandbox'],
        summary: "Move the account's test clock forward: each period end it passes is a renewal that does `outcome` (paid by default)",
        body: Type.Object(
          {
            days: Type.Integer({ minimum: 1, maximum: MAX_ADVANCE_DAYS, description: `Days to move the clock; at most ${MAX_ADVANCE_DAYS} (two periods), as with Stripe's test clocks` }),
            outcome: Type.Optional(RenewalOutcome),
          },
          { additionalProperties: false, examples: [{ days: 31, outcome: 'failed' }] },
        ),
        response: { 200: SubscriptionOut },
      },
    },
    async (request) => {
      const subscription = await payments.advance(request.auth.accountId, request.body.days, request.body.outcome ?? 'paid', ctx.clock());
      return applied(subscription, request.log);
    },
  );

  /** Waits for the processor to apply an outcome's record; the records of an account are applied in order. */
  async function appliedBy(outcome: PaymentOutcome | undefined, log: FastifyBaseLogger): Promise<void> {
    if (outcome === undefined || outcome.recordId === null) return;
    if (!(await effectApplied(ctx.clients.pool, outcome.recordId, EFFECT_WAIT_MS))) {
      log.warn({ record: outcome.recordId }, 'answered before the payments processor applied the payment');
    }
  }

  /** The answer once the renewals' effects are applied (402 `payment_required` without a paid subscription). */
  async function applied(subscription: SandboxSubscription | undefined, log: FastifyBaseLogger) {
    if (subscription === undefined) throw gatewayError('payment_required', { detail: 'the account has no paid subscription to renew: pay Pro through the component first' });
    await appliedBy(subscription.renewals.at(-1), log);
    const { attempt } = subscription;
    return {
      attempt_id: attempt.attemptId,
      status: attempt.status,
      period_end: attempt.periodEnd === null ? null : new Date(attempt.periodEnd).toISOString(),
      clock: new Date(subscription.clock).toISOString(),
      renewals: subscription.renewals.map((renewal) => renewal.kind),
    };
  }

  // The component posts from the partner's page, as Stripe.js posts to Stripe: any origin may.
  app.options('/sandbox/payments/confirm', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('Access-Control-Allow-Origin', '*')
      .header('Access-Control-Allow-Methods', 'POST, OPTIONS')
      .header('Access-Control-Allow-Headers', 'Content-Type')
      .header('Access-Control-Max-Age', '600')
      .send(),
  );
};
