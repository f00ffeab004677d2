import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { deliveryRoutes } from './deliveries.js';
import { fireRoutes } from './fire.js';
import { webhookRoutes as registrationRoutes, type WebhookRouteOptions } from './routes.js';

/** Everything under `/webhooks` but the event stream: registration, samples, deliveries. */
export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRouteOptions> = async (app, options) => {
  await app.register(registrationRoutes, options);
  await app.register(fireRoutes, options);
  await app.register(deliveryRoutes, options);
};
