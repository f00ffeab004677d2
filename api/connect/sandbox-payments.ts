import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { includesConnect } from '../../processors/usage/plans.js';
import { asEventId, newId } from '../../schemas/ids.js';
import { writeConfig } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import type { SandboxPayments } from './payments.js';

/**
 * What the sandbox payment form posts, as Stripe.js confirms a payment with its client secret:
 * the secret is the credential. A paid attempt makes the account Pro, and its connections move
 * at once (resumed, or on to the number step).
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
    async (request) => {
      const attempt = await payments.confirm(request.body.client_secret, request.body.outcome ?? 'paid', ctx.clock());
      if (attempt === undefined) throw gatewayError('not_found');
      const account = ctx.directory.accounts.get(attempt.accountId);
      if (attempt.status === 'paid' && account !== undefined && !includesConnect(account.plan)) {
        const { id, ...rest } = account;
        await writeConfig(ctx, id, {
          event_id: asEventId(newId('cfg')),
          occurred_at: ctx.clock(),
          account_id: id,
          project_id: null,
          instance_id: null,
          entity_id: id,
          entity: { kind: 'account', ...rest, plan: 'pro' },
        });
      }
      if (attempt.status === 'paid') {
        for (const connection of ctx.connections.ofAccount(attempt.accountId).filter((c) => c.to_status !== 'revoked')) {
          await ctx.connectionWriter.check(connection.connection_id, 'payment');
        }
      }
      return { attempt_id: attempt.attemptId, status: attempt.status };
    },
  );
};
