import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StripePayments } from '../../connectors/payments/stripe.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { securedBy } from '../openapi-security.js';

/** Stripe's events are small; a body over this is not Stripe's. */
const WEBHOOK_BODY_LIMIT = 512 * 1024;

/**
 * Where Stripe posts its events. The body is verified byte for byte against `Stripe-Signature`
 * with the package's own check (400 `invalid_request` otherwise); a verified event becomes a
 * payment record on the log, then 200: its effect on the plan is the payments processor's. Any
 * failure before that answers 5xx, and Stripe delivers the event again.
 */
export const stripeWebhookRoutes: FastifyPluginAsyncTypebox<RouteOptions & { payments: StripePayments }> = async (app, { ctx, payments }) => {
  // The signature covers the exact bytes: this route reads its JSON as a buffer.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post(
    '/payments/stripe/webhook',
    {
      config: { public: true },
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        tags: ['payments'],
        summary: "Stripe's webhook: signed events about subscriptions, invoices and payments",
        security: securedBy('stripeSignature'),
        description:
          'Posted by Stripe, never by clients. The body is a Stripe event, verified against `Stripe-Signature`, e.g. ' +
          '`{"id":"evt_…","object":"event","type":"invoice.paid","data":{"object":{"object":"invoice","parent":{"subscription_details":{"subscription":"sub_…"}},…}}}`. ' +
          'Taken: payment_intent.processing, payment_intent.payment_failed, invoice.paid, invoice.finalized, customer.subscription.updated, customer.subscription.deleted; others answer 200 with applied false.',
        headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String({ maxLength: 2_000 })) }),
        response: { 200: Type.Object({ received: Type.Literal(true), applied: Type.Boolean() }) },
      },
    },
    async (request) => {
      const body = request.body;
      const event = Buffer.isBuffer(body) ? payments.verify(body, request.headers['stripe-signature']) : undefined;
      if (event === undefined) throw gatewayError('invalid_request', { detail: 'Stripe-Signature does not verify this body' });
      const outcome = await payments.apply(event, ctx.clock());
      return { received: true as const, applied: outcome !== undefined };
    },
  );
};
