import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Mailer } from '../../connectors/email/smtp.js';
import type { SandboxPayments } from '../../connectors/payments/sandbox.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { applyPaymentOutcome } from './effects.js';

/**
 * What the sandbox payment form posts, as Stripe.js confirms a payment with its client secret:
 * the secret is the credential, so any origin may post it (CORS `*`). A paid attempt makes the
 * account Pro, and its connections move at once (resumed, or on to the number step).
 */
export const sandboxPaymentRoutes: FastifyPluginAsyncTypebox<RouteOptions & { payments: SandboxPayments; mailer: Pick<Mailer, 'send'> }> = async (
  app,
  { ctx, payments, mailer },
) => {
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
      await applyPaymentOutcome(ctx, mailer, outcome);
      return { attempt_id: outcome.attempt.attemptId, status: outcome.attempt.status };
    },
  );

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
