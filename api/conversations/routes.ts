import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { phoneJid } from '../../schemas/phones.js';
import { conversationExists, listConversations, listMessages } from '../../processors/conversations/index.js';
import { projectInstance } from '../../processors/instances/queries.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { Cursor, decodeCursor, Limit, NextCursor, paginate } from './cursor.js';
import { conversationOut, messageOut, type MediaUrlSigner } from './render.js';
import { ConversationOut, MessageOut } from './schemas.js';

export interface ConversationRouteOptions extends RouteOptions {
  /** Signs media URLs of received messages; without it, media carry no url. */
  readonly signMediaUrl?: MediaUrlSigner;
}

const ConversationJid = Type.String({
  pattern: '^(\\+[1-9][0-9]{6,14}|[0-9A-Za-z._:-]+@(s\\.whatsapp\\.net|g\\.us|lid))$',
  description: 'A jid (URL-encoded), or an E.164 phone standing for its phone jid',
});

/** The unified inbox (spec 4.3): conversations across the project's numbers, and their history. */
export const conversationRoutes: FastifyPluginAsyncTypebox<ConversationRouteOptions> = async (app, { ctx, signMediaUrl }) => {
  const { pool } = ctx.clients;

  app.get(
    '/conversations',
    {
      config: { scope: 'conversations:read' },
      schema: {
        tags: ['conversations'],
        summary: 'The inbox: conversations, newest message first',
        querystring: Type.Object({
          instance_id: Type.Optional(Type.String({ maxLength: 100, description: 'Only conversations this number took part in' })),
          limit: Limit,
          cursor: Type.Optional(Cursor),
        }),
        response: { 200: Type.Object({ data: Type.Array(ConversationOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { instance_id, limit, cursor } = request.query;
      // A number of another project, or none: 404, as everywhere (not an empty page).
      if (instance_id !== undefined && (await projectInstance(pool, request.auth.projectId, instance_id)) === undefined) throw gatewayError('not_found');
      const rows = await listConversations(pool, request.auth.projectId, instance_id, {
        limit: limit + 1,
        after: cursor === undefined ? undefined : decodeCursor(cursor),
      });
      const page = paginate(rows, limit, (row) => ({ at: row.last_message_at, id: row.jid }));
      return { data: page.items.map(conversationOut), next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/conversations/:jid/messages',
    {
      config: { scope: 'conversations:read' },
      schema: {
        tags: ['conversations'],
        summary: "A conversation's messages, newest first",
        params: Type.Object({ jid: ConversationJid }),
        querystring: Type.Object({ limit: Limit, cursor: Type.Optional(Cursor) }),
        response: { 200: Type.Object({ data: Type.Array(MessageOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { projectId } = request.auth;
      const { limit, cursor } = request.query;
      const jid = request.params.jid.startsWith('+') ? phoneJid(request.params.jid) : request.params.jid;
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (!(await conversationExists(pool, projectId, jid))) throw gatewayError('not_found');
      const rows = await listMessages(pool, projectId, jid, { limit: limit + 1, after });
      const page = paginate(rows, limit, (row) => ({ at: row.occurred_at, id: row.message_id }));
      return { data: await Promise.all(page.items.map((row) => messageOut(row, signMediaUrl))), next_cursor: page.next_cursor };
    },
  );
};
