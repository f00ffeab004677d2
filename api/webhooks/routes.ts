import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { newSigningSecret } from '../../events/signature.js';
import { newId } from '../../schemas/ids.js';
import type { Cipher } from '../../shared/cipher.js';
import { fieldsOf, removeWebhook, writeWebhook, type WebhookFields } from '../../processors/config/webhooks.js';
import { configLockDeps, configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { eventTypesOf, sharedEvent } from './event-types.js';
import { changeProjectWebhooks } from './project-lock.js';
import { ownWebhook, readAccess as read, writeAccess as write } from './reach.js';
import { webhookOut } from './records.js';
import { WebhookIn, WebhookOut, WebhookParams, WebhookPatch, WebhookWithSecret } from './schemas.js';
import { urlProblem } from './url.js';

/**
 * Webhook registration (spec 4.3, 6.2): webhooks are `gw.config` entities held by every process's
 * directory. Every change of a project's webhooks runs under the project's lock with the
 * directory caught up, so "one webhook per event" holds across concurrent requests and processes,
 * and a change never overwrites one it has not seen.
 */
export interface WebhookRouteOptions extends RouteOptions {
  /** Seals signing secrets (the API's one cipher, under `SECRETS_KEY`). */
  readonly cipher: Cipher;
}

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRouteOptions> = async (app, { ctx, cipher }) => {
  const { directory } = ctx;
  const { outbound } = ctx.clients.config;

  const own = (projectId: string, id: string) => ownWebhook(directory, projectId, id);
  const checkUrl = (url: string) => {
    const problem = urlProblem(url, { allowPrivateNetwork: outbound.allowPrivateNetwork, allowRanges: outbound.allowCidrs });
    if (problem !== undefined) throw gatewayError('invalid_request', { detail: problem });
  };
  const refuseTaken = (projectId: string, eventTypes: readonly string[], self?: string) => {
    for (const other of directory.webhooksOf(projectId)) {
      const event = other.id === self ? undefined : sharedEvent(eventTypes, other.event_types);
      if (event !== undefined) throw gatewayError('event_taken', { event });
    }
  };
  const save = (auth: { accountId: string; projectId: string }, id: string, fields: WebhookFields, at?: number) => writeWebhook(configWriter(ctx), auth, id, fields, at);

  app.get(
    '/webhooks',
    { config: read, schema: { tags: ['webhooks'], summary: "List the project's webhooks", response: { 200: Type.Object({ data: Type.Array(WebhookOut) }) } } },
    async (request) => ({
      data: directory
        .webhooksOf(request.auth.projectId)
        .sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id))
        .map(webhookOut),
    }),
  );

  app.get(
    '/webhooks/:id',
    { config: read, schema: { tags: ['webhooks'], summary: 'A webhook', params: WebhookParams, response: { 200: WebhookOut } } },
    async (request) => webhookOut(own(request.auth.projectId, request.params.id)),
  );

  app.post(
    '/webhooks',
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        summary: 'Register a webhook; its signing secret is in this answer only',
        body: WebhookIn,
        response: { 201: WebhookWithSecret },
      },
    },
    async (request, reply) => {
      const { auth, body } = request;
      checkUrl(body.url);
      const eventTypes = eventTypesOf(body.event_types ?? []);
      const secret = newSigningSecret();
      const id = newId('wh');
      const created = await changeProjectWebhooks(ctx, auth.projectId, async () => {
        refuseTaken(auth.projectId, eventTypes);
        const now = Date.now();
        await save(auth, id, {
          url: body.url,
          event_types: eventTypes,
          secret_ciphertext: cipher.seal(secret),
          enabled: body.enabled ?? true,
          description: body.description ?? null,
          created_at: now,
        }, now);
        return own(auth.projectId, id);
      });
      return reply.code(201).send({ ...webhookOut(created), secret });
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      config: write,
      schema: { tags: ['webhooks'], summary: 'Change a webhook', params: WebhookParams, body: WebhookPatch, response: { 200: WebhookOut } },
    },
    async (request) => {
      const { auth, body, params } = request;
      if (body.url !== undefined) checkUrl(body.url);
      const eventTypes = body.event_types === undefined ? undefined : eventTypesOf(body.event_types);
      const changed = await changeProjectWebhooks(ctx, auth.projectId, async () => {
        const current = own(auth.projectId, params.id);
        if (eventTypes !== undefined) refuseTaken(auth.projectId, eventTypes, current.id);
        await save(auth, current.id, {
          ...fieldsOf(current),
          ...(body.url !== undefined && { url: body.url }),
          ...(eventTypes !== undefined && { event_types: eventTypes }),
          ...(body.enabled !== undefined && { enabled: body.enabled }),
          ...(body.description !== undefined && { description: body.description }),
        });
        return own(auth.projectId, current.id);
      });
      return webhookOut(changed);
    },
  );

  app.delete(
    '/webhooks/:id',
    { config: write, schema: { tags: ['webhooks'], summary: 'Delete a webhook', params: WebhookParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const { auth, params } = request;
      await removeWebhook({ ...configWriter(ctx), ...configLockDeps(ctx) }, { projectId: auth.projectId, id: params.id });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        summary: 'Replace the signing secret; the old one stops at once',
        params: WebhookParams,
        response: { 200: WebhookWithSecret },
      },
    },
    async (request) => {
      const { auth, params } = request;
      const secret = newSigningSecret();
      const rotated = await changeProjectWebhooks(ctx, auth.projectId, async () => {
        const current = own(auth.projectId, params.id);
        await save(auth, current.id, { ...fieldsOf(current), secret_ciphertext: cipher.seal(secret) });
        return own(auth.projectId, current.id);
      });
      return { ...webhookOut(rotated), secret };
    },
  );
};
