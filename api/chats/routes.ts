import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { toJid } from '../../schemas/phones.js';
import { ChatActionValues } from '../../schemas/records.js';
import type { RouteOptions } from '../context.js';
import type { LiveNumbers } from '../live/numbers.js';
import { ChatRef, InstanceIdField } from '../live/schemas.js';

export interface ChatRouteOptions extends RouteOptions {
  readonly numbers: LiveNumbers;
}

const ChatOut = Type.Object({
  jid: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  unread_count: Type.Integer({ description: 'Messages not read; -1 when marked unread by hand' }),
  archived: Type.Boolean(),
  pinned: Type.Boolean(),
  last_message_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  label_ids: Type.Array(Type.String(), { description: 'Labels on the chat (GET /labels)' }),
});

const ChatDone = Type.Object({ instance_id: Type.String(), jid: Type.String(), action: Type.String() });

/**
 * `/chats` (spec 4.3 names it; shapes are ours, after WAHA's and Evolution API's): the chats of one
 * number as the network shows them on the phone, and the phone's actions on one chat (archive,
 * read, pin and their opposites). Both go through the number's live session.
 */
export const chatRoutes: FastifyPluginAsyncTypebox<ChatRouteOptions> = async (app, { numbers }) => {
  app.get(
    '/chats',
    {
      config: { scope: 'conversations:read' },
      schema: {
        tags: ['chats'],
        summary: "The number's chats as its phone shows them, most recent first",
        querystring: Type.Object(
          { instance_id: InstanceIdField, limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ instance_id: Type.String(), data: Type.Array(ChatOut) }) },
      },
    },
    async (request) => {
      const { instance_id: instanceId, limit } = request.query;
      const { chats } = await numbers.ask(request.auth.projectId, instanceId, { kind: 'list_chats', limit });
      return {
        instance_id: instanceId,
        data: chats.map((chat) => ({ ...chat, label_ids: [...chat.label_ids], last_message_at: chat.last_message_at === null ? null : new Date(chat.last_message_at).toISOString() })),
      };
    },
  );

  app.post(
    '/chats/:chat/:action',
    {
      config: { scope: 'messages:send' },
      schema: {
        tags: ['chats'],
        summary: 'Archive, unarchive, mark read or unread, pin or unpin a chat of the number',
        params: Type.Object({ chat: ChatRef, action: Type.Union(ChatActionValues.map((a) => Type.Literal(a))) }),
        body: Type.Object({ instance_id: InstanceIdField }, { additionalProperties: false }),
        response: { 200: ChatDone },
      },
    },
    async (request) => {
      const jid = toJid(request.params.chat);
      const { action } = request.params;
      await numbers.ask(request.auth.projectId, request.body.instance_id, { kind: 'modify_chat', chat_jid: jid, action });
      return { instance_id: request.body.instance_id, jid, action };
    },
  );
};
