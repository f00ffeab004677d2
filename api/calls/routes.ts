import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { callById, listCalls, type CallRow } from '../../processors/index.js';
import { projectInstance } from '../../processors/instances/queries.js';
import { asEventId, asInstanceId, asMessageId, newId } from '../../schemas/ids.js';
import { CallStatusValues } from '../../schemas/records.js';
import type { RouteOptions } from '../context.js';
import { Cursor, decodeCursor, Limit, NextCursor, paginate } from '../conversations/cursor.js';
import { gatewayError } from '../errors.js';
import type { LiveNumbers } from '../live/numbers.js';
import { InstanceIdField } from '../live/schemas.js';
import { appendSend } from '../../processors/sends/append.js';

export interface CallRouteOptions extends RouteOptions {
  readonly numbers: LiveNumbers;
}

const CallOut = Type.Object({
  call_id: Type.String(),
  instance_id: Type.String(),
  from: Type.String({ description: "The caller's jid (the phone's where known)" }),
  from_lid: Type.Union([Type.String(), Type.Null()]),
  is_video: Type.Boolean(),
  group_jid: Type.Union([Type.String(), Type.Null()]),
  status: Type.String({ enum: [...CallStatusValues], description: 'The last status the network gave: offer and ringing while it rings, then timeout, reject, accept or terminate' }),
  offline: Type.Boolean({ description: 'Told while the number was offline' }),
  rejected_by_us: Type.Boolean({ description: 'Rejected through POST /calls/{id}/reject' }),
  started_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const RejectBody = Type.Object(
  { reply_text: Type.Optional(Type.String({ minLength: 1, maxLength: 4_096, description: 'Sent to the caller as a text message once the call is rejected' })) },
  { additionalProperties: false },
);

const Rejected = Type.Object({
  call_id: Type.String(),
  instance_id: Type.String(),
  status: Type.Literal('reject'),
  reply_message_id: Type.Union([Type.String(), Type.Null()], { description: 'message_id of the reply text, followed like any send' }),
});

const RINGING = new Set(['offer', 'ringing']);

function callOut(row: CallRow): Static<typeof CallOut> {
  return {
    call_id: row.call_id,
    instance_id: row.instance_id,
    from: row.caller_jid,
    from_lid: row.caller_lid,
    is_video: row.is_video,
    group_jid: row.group_jid,
    status: row.status,
    offline: row.offline,
    rejected_by_us: row.rejected_by_us,
    started_at: row.started_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * `/calls` (spec 4.3 names it; shapes are ours, after WAHA's and Evolution API's): the call log of
 * the project's numbers, built from the network's call events, and the reject of a ringing call
 * with an optional reply text (a text send like any other).
 */
export const callRoutes: FastifyPluginAsyncTypebox<CallRouteOptions> = async (app, { ctx, numbers }) => {
  const { pool, producer } = ctx.clients;

  app.get(
    '/calls',
    {
      config: { scope: 'conversations:read' },
      schema: {
        tags: ['calls'],
        summary: "The call log of the project's numbers, newest first",
        querystring: Type.Object({ instance_id: Type.Optional(InstanceIdField), limit: Limit, cursor: Type.Optional(Cursor) }, { additionalProperties: false }),
        response: { 200: Type.Object({ data: Type.Array(CallOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { instance_id: instanceId, limit, cursor } = request.query;
      // A number of another project, or none: 404, as everywhere (not an empty page).
      if (instanceId !== undefined && (await projectInstance(pool, request.auth.projectId, instanceId)) === undefined) throw gatewayError('not_found');
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      const rows = await listCalls(pool, request.auth.projectId, { instanceId }, { limit: limit + 1, after });
      const page = paginate(rows, limit, (row) => ({ at: row.started_at, id: row.call_id }));
      return { data: page.items.map(callOut), next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/calls/:id/reject',
    {
      config: { scope: 'messages:send' },
      schema: {
        tags: ['calls'],
        summary: 'Reject a ringing call, with an optional reply text to the caller',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }),
        body: Type.Optional(RejectBody),
        response: { 200: Rejected },
      },
    },
    async (request) => {
      const { auth } = request;
      const call = await callById(pool, auth.projectId, request.params.id);
      if (call === undefined) throw gatewayError('not_found');
      if (!RINGING.has(call.status)) throw gatewayError('invalid_request', { detail: `the call is over (${call.status})` });
      await numbers.ask(auth.projectId, call.instance_id, { kind: 'reject_call', call_id: call.call_id, caller_jid: call.caller_lid ?? call.caller_jid });
      const text = request.body?.reply_text;
      let replyId: string | null = null;
      if (text !== undefined) {
        replyId = newId('msg');
        await appendSend(producer, {
          event_id: asEventId(newId('evt')),
          occurred_at: Date.now(),
          account_id: auth.accountId,
          project_id: auth.projectId,
          instance_id: asInstanceId(call.instance_id),
          message_id: asMessageId(replyId),
          client_reference: null,
          to: call.caller_jid,
          origin: 'api',
          campaign_id: null,
          idempotency_key_hash: null,
          quoted_message_id: null,
          mentions: [],
          content: { kind: 'text', body: text },
        });
      }
      return { call_id: call.call_id, instance_id: call.instance_id, status: 'reject' as const, reply_message_id: replyId };
    },
  );
};
