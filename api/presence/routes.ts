import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { toJid } from '../../schemas/phones.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import type { LiveNumbers } from '../live/numbers.js';
import { ChatRef, InstanceIdField } from '../live/schemas.js';

export interface PresenceRouteOptions extends RouteOptions {
  readonly numbers: LiveNumbers;
}

const ONLINE = new Set(['available', 'unavailable']);

const PresenceBody = Type.Object(
  {
    instance_id: InstanceIdField,
    presence: Type.Union([Type.Literal('available'), Type.Literal('unavailable'), Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')], {
      description: 'available / unavailable: the number online or offline; composing, recording, paused: typing state in the chat `to`',
    }),
    to: Type.Optional(ChatRef),
  },
  { additionalProperties: false },
);

const PresenceSet = Type.Object({ instance_id: Type.String(), presence: Type.String(), to: Type.Union([Type.String(), Type.Null()]) });

const PresenceOut = Type.Object({
  instance_id: Type.String(),
  jid: Type.String(),
  presence: Type.Union([Type.Literal('unknown'), Type.Literal('available'), Type.Literal('unavailable'), Type.Literal('composing'), Type.Literal('recording'), Type.Literal('paused')]),
  last_seen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  heard_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());

/**
 * `/presence` (spec 4.3 names it; shapes are ours, after WAHA's and Evolution API's): show the
 * number online or offline, or typing / recording in a chat before a send; read a contact's last
 * presence. Both act through the number's live session.
 */
export const presenceRoutes: FastifyPluginAsyncTypebox<PresenceRouteOptions> = async (app, { numbers }) => {
  app.post(
    '/presence',
    {
      config: { scope: 'presence:write' },
      schema: { tags: ['presence'], summary: 'Show the number online or offline, or a typing state in a chat', body: PresenceBody, response: { 200: PresenceSet } },
    },
    async (request) => {
      const { instance_id: instanceId, presence, to } = request.body;
      const online = ONLINE.has(presence);
      if (online && to !== undefined) throw gatewayError('invalid_request', { detail: `${presence} is the number's own state and takes no "to"` });
      if (!online && to === undefined) throw gatewayError('invalid_request', { detail: `${presence} needs "to", the chat to show it in` });
      const chat = to === undefined ? null : toJid(to);
      await numbers.ask(request.auth.projectId, instanceId, { kind: 'set_presence', presence, chat_jid: chat });
      return { instance_id: instanceId, presence, to: chat };
    },
  );

  app.get(
    '/presence/:chat',
    {
      config: { scope: 'presence:write' },
      schema: {
        tags: ['presence'],
        summary: "A contact's last presence as the number heard it (subscribes the number to it)",
        params: Type.Object({ chat: ChatRef }),
        querystring: Type.Object({ instance_id: InstanceIdField }, { additionalProperties: false }),
        response: { 200: PresenceOut },
      },
    },
    async (request) => {
      const jid = toJid(request.params.chat);
      const heard = await numbers.ask(request.auth.projectId, request.query.instance_id, { kind: 'read_presence', jid });
      return { instance_id: request.query.instance_id, jid: heard.jid, presence: heard.presence, last_seen: iso(heard.last_seen), heard_at: iso(heard.heard_at) };
    },
  );
};
