import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { toJid } from '../../schemas/phones.js';
import type { RouteOptions } from '../context.js';
import type { LiveNumbers } from '../live/numbers.js';
import { ChatRef, InstanceIdField } from '../live/schemas.js';

export interface LabelRouteOptions extends RouteOptions {
  readonly numbers: LiveNumbers;
}

const LabelOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  color: Type.Integer({ description: "The network's color index (0-19)" }),
  chat_jids: Type.Array(Type.String(), { description: 'The chats it is on' }),
});

const LabelParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), chat: ChatRef });
const NumberRef = Type.Object({ instance_id: InstanceIdField }, { additionalProperties: false });
const Labelled = Type.Object({ instance_id: Type.String(), label_id: Type.String(), jid: Type.String(), labelled: Type.Boolean() });

/**
 * `/labels` (spec 4.3 names it; shapes are ours, after WAHA's and Evolution API's): a number's
 * labels and the chats they are on, and a label put on a chat or taken off. The network offers
 * labels to business accounts only: another number answers 422 `not_supported`.
 */
export const labelRoutes: FastifyPluginAsyncTypebox<LabelRouteOptions> = async (app, { numbers }) => {
  app.get(
    '/labels',
    {
      config: { scope: 'conversations:read' },
      schema: {
        tags: ['labels'],
        summary: "The number's labels, each with the chats it is on",
        querystring: Type.Object({ instance_id: InstanceIdField }, { additionalProperties: false }),
        response: { 200: Type.Object({ instance_id: Type.String(), data: Type.Array(LabelOut) }) },
      },
    },
    async (request) => {
      const { instance_id: instanceId } = request.query;
      const { labels } = await numbers.ask(request.auth.projectId, instanceId, { kind: 'list_labels', with_chats: true });
      return { instance_id: instanceId, data: labels.map((label) => ({ ...label, chat_jids: [...label.chat_jids] })) };
    },
  );

  const labelChat = async (projectId: string, instanceId: string, params: { id: string; chat: string }, add: boolean) => {
    const jid = toJid(params.chat);
    await numbers.ask(projectId, instanceId, { kind: 'label_chat', chat_jid: jid, label_id: params.id, add });
    return { instance_id: instanceId, label_id: params.id, jid, labelled: add };
  };

  app.post(
    '/labels/:id/chats/:chat',
    {
      config: { scope: 'messages:send' },
      schema: { tags: ['labels'], summary: 'Put a label on a chat', params: LabelParams, body: NumberRef, response: { 200: Labelled } },
    },
    async (request) => labelChat(request.auth.projectId, request.body.instance_id, request.params, true),
  );

  app.delete(
    '/labels/:id/chats/:chat',
    {
      config: { scope: 'messages:send' },
      schema: { tags: ['labels'], summary: 'Take a label off a chat', params: LabelParams, querystring: NumberRef, response: { 200: Labelled } },
    },
    async (request) => labelChat(request.auth.projectId, request.query.instance_id, request.params, false),
  );
};
