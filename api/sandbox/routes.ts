import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { Pool } from 'pg';
import { asEventId, asInstanceId, newId } from '../../schemas/ids.js';
import { GroupEventKindValues, SandboxMediaTypeValues, type SandboxCommand, type SandboxCustomerMessage } from '../../schemas/records.js';
import { simulatedWaId } from '../../connectors/sandbox/ids.js';
import { topics } from '../../topics/index.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { withDeadline } from '../../shared/deadline.js';
import { TEXT_BODY_LIMIT } from '../body-limits.js';
import { MediaType } from '../messages/schemas.js';

/** Bodies take only the fields they declare. */
const closed = { additionalProperties: false } as const;

const E164 = Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164 phone', examples: ['+5511999998888'] });
const Lid = Type.String({ pattern: '^[0-9]+@lid$', description: 'Privacy identity', examples: ['81234567890123@lid'] });
const Person = Type.String({
  pattern: '^(\\+[1-9][0-9]{6,14}|[0-9]+@s\\.whatsapp\\.net|[0-9]+@lid)$',
  description: 'E.164 phone, phone jid or @lid identity',
});
const Chat = Type.String({
  pattern: '^(\\+[1-9][0-9]{6,14}|[0-9]+@s\\.whatsapp\\.net|[0-9]+@lid|[0-9-]+@g\\.us)$',
  description: 'E.164 phone, phone jid, @lid identity or group jid',
});
const Group = Type.Object(
  {
    jid: Type.String({ pattern: '^[0-9-]+@g\\.us$' }),
    name: Type.Optional(Type.String({ maxLength: 100 })),
  },
  closed,
);
const WaMessageId = Type.String({ minLength: 1, maxLength: 128, description: 'wa_message_id of a message' });

/** Media given inline; the sandbox generates a small file when base64 is absent. Capped at 256 KiB. */
const MAX_BASE64 = 349_528;
const Media = Type.Object(
  {
    base64: Type.Optional(Type.String({ maxLength: MAX_BASE64, pattern: '^[A-Za-z0-9+/]*={0,2}$' })),
    mimetype: Type.Optional(MediaType),
    filename: Type.Optional(Type.String({ maxLength: 255 })),
  },
  closed,
);

const Content = Type.Union(
  [
    Type.Object({ type: Type.Literal('text'), body: Type.String({ minLength: 1, maxLength: 65_536 }) }, closed),
    Type.Object({
      type: Type.Union(SandboxMediaTypeValues.map((t) => Type.Literal(t))),
      media: Type.Optional(Media),
      caption: Type.Optional(Type.String({ maxLength: 4_096 })),
      ptt: Type.Optional(Type.Boolean({ description: 'audio: a voice note' })),
    }, closed),
    Type.Object({
      type: Type.Literal('location'),
      latitude: Type.Number({ minimum: -90, maximum: 90 }),
      longitude: Type.Number({ minimum: -180, maximum: 180 }),
      name: Type.Optional(Type.String({ maxLength: 1_000 })),
      address: Type.Optional(Type.String({ maxLength: 1_000 })),
    }, closed),
    Type.Object({ type: Type.Literal('contact'), contact_name: Type.String({ minLength: 1, maxLength: 255 }), contact_vcard: Type.Optional(Type.String({ maxLength: 10_000 })) }, closed),
    Type.Object({ type: Type.Literal('reaction'), quoted_message_id: WaMessageId, emoji: Type.String({ maxLength: 16 }) }, closed),
    Type.Object({
      type: Type.Literal('poll'),
      name: Type.String({ minLength: 1, maxLength: 255 }),
      options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 2, maxItems: 12 }),
      selectable_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 12 })),
    }, closed),
    Type.Object({ type: Type.Literal('poll_vote'), poll_message_id: WaMessageId, selected: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 12 }) }, closed),
    Type.Object({ type: Type.Literal('edit'), quoted_message_id: WaMessageId, body: Type.String({ minLength: 1, maxLength: 65_536 }) }, closed),
    Type.Object({ type: Type.Literal('delete'), quoted_message_id: WaMessageId }, closed),
  ],
  { description: 'What is written; `type` is the received message type (spec 2.4)' },
);

const Accepted = Type.Object({
  accepted: Type.Literal(true),
  wa_message_id: Type.Optional(Type.String({ description: 'Network id the simulated message will carry (to reply or react to it)' })),
});

const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** The statuses a control may set; pending and connecting come from pairing. */
const settableStatuses = ['connected', 'warming', 'disconnected', 'logged_out', 'banned'] as const;

type Control = SandboxCommand['control'];
type ControlContent = SandboxCustomerMessage['content'];

/**
 * Controls of the sandbox network (`/sandbox/instances/:id/...`): pair a number, change its status,
 * have customers or the owner's phone write, tune receipts and failures, teach it lids. Each
 * control is written to `gw.sandbox.commands` for the connector that owns the number; the answer
 * (202) means it is on the log, not that it was applied.
 */
export const sandboxRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { pool, producer } = ctx.clients;

  function control<B extends TSchema>(path: string, summary: string, body: B, toControl: (body: Static<B>) => Control): void {
    app.post(
      `/sandbox/instances/:id/${path}`,
      {
        config: { scope: 'sandbox:write' },
        bodyLimit: path.endsWith('-messages') ? TEXT_BODY_LIMIT : undefined,
        schema: { tags: ['sandbox'], summary, params: Params, body, response: { 202: Accepted } },
      },
      async (request, reply) => {
        await requireSandboxNumber(pool, request.auth.projectId, request.params.id);
        const command: SandboxCommand = {
          event_id: asEventId(newId('evt')),
          occurred_at: Date.now(),
          account_id: request.auth.accountId,
          project_id: request.auth.projectId,
          instance_id: asInstanceId(request.params.id),
          control: toControl(request.body),
        };
        await withDeadline(producer.send(topics.sandboxCommands, [{ key: command.instance_id, value: command }]), 5_000);
        const writes = command.control.kind === 'customer_message' || command.control.kind === 'phone_message';
        return reply.code(202).send(writes ? { accepted: true as const, wa_message_id: simulatedWaId(command.event_id) } : { accepted: true as const });
      },
    );
  }

  control(
    'connect',
    'Start pairing: a QR payload or pairing code goes to the stream; auto completes it at once',
    Type.Object({
      method: Type.Optional(Type.Union([Type.Literal('qr'), Type.Literal('code')])),
      phone: Type.Optional(E164),
      auto: Type.Optional(Type.Boolean()),
    }, closed),
    (b) => ({ kind: 'connect', method: b.method ?? 'qr', phone: b.phone ?? null, auto: b.auto ?? false }),
  );

  control('scan', 'The phone scans the QR or types the code: the number connects', Type.Object({ phone: Type.Optional(E164) }, closed), (b) => ({
    kind: 'scan',
    phone: b.phone ?? null,
  }));

  control(
    'status',
    'The network changes the number status',
    Type.Object({
      status: Type.Union(settableStatuses.map((s) => Type.Literal(s))),
      reason: Type.Optional(Type.String({ maxLength: 200 })),
    }, closed),
    (b) => ({ kind: 'set_status', status: b.status, reason: b.reason ?? null }),
  );

  control(
    'customer-messages',
    'A customer writes to the number, directly or in a group',
    Type.Object({
      from: Person,
      name: Type.Optional(Type.String({ maxLength: 100 })),
      content: Content,
      quoted_id: Type.Optional(WaMessageId),
      group: Type.Optional(Group),
      mentions: Type.Optional(Type.Array(Person, { maxItems: 256 })),
    }, closed),
    (b) => ({
      kind: 'customer_message',
      from: b.from,
      name: b.name ?? null,
      content: controlContent(b.content),
      quoted_id: b.quoted_id ?? null,
      group: b.group ? { jid: b.group.jid, name: b.group.name ?? null } : null,
      mentions: b.mentions ?? [],
    }),
  );

  control(
    'phone-messages',
    "The number's owner writes from the phone (message.sent with origin external)",
    Type.Object({ to: Chat, content: Content, quoted_id: Type.Optional(WaMessageId) }, closed),
    (b) => ({ kind: 'phone_message', to: b.to, content: controlContent(b.content), quoted_id: b.quoted_id ?? null }),
  );

  control(
    'behaviour',
    'Receipt delays, failing recipients and blockers of the number sends (phones ending in 0000 always fail, 0404 have always blocked it)',
    Type.Object({
      delivered_after_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
      read_after_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
      fail_to: Type.Optional(Type.Array(E164, { maxItems: 1_000 })),
      block_from: Type.Optional(Type.Array(E164, { maxItems: 1_000 })),
    }, closed),
    (b) => ({ kind: 'set_behaviour', delivered_after_ms: b.delivered_after_ms ?? null, read_after_ms: b.read_after_ms ?? null, fail_to: b.fail_to ?? null, block_from: b.block_from ?? null }),
  );

  control('lids', 'The number learns the phone behind a lid', Type.Object({ lid: Lid, phone: E164 }, closed), (b) => ({
    kind: 'map_lid',
    lid: b.lid,
    phone: b.phone,
  }));

  control(
    'group-events',
    'Something happens in a group the number is in',
    Type.Object({
      change: Type.Union(GroupEventKindValues.map((k) => Type.Literal(k))),
      group: Group,
      author: Type.Optional(Person),
      participants: Type.Optional(Type.Array(Person, { maxItems: 256 })),
      subject: Type.Optional(Type.String({ maxLength: 100 })),
      description: Type.Optional(Type.String({ maxLength: 2_048 })),
    }, closed),
    (b) => ({
      kind: 'group_update',
      change: b.change,
      group: { jid: b.group.jid, name: b.group.name ?? null },
      author: b.author ?? null,
      participants: b.participants ?? [],
      subject: b.subject ?? null,
      description: b.description ?? null,
    }),
  );

  control(
    'calls',
    'A customer calls the number (status offer rings; timeout, accept, terminate end the call)',
    Type.Object({
      from: Person,
      call_id: Type.String({ minLength: 1, maxLength: 128, description: 'The id the call keeps on its later statuses' }),
      status: Type.Optional(Type.Union(SANDBOX_CALL_STATUSES.map((s) => Type.Literal(s)))),
      is_video: Type.Optional(Type.Boolean()),
    }, closed),
    (b) => ({ kind: 'incoming_call', from: b.from, call_id: b.call_id, status: b.status ?? 'offer', is_video: b.is_video ?? false }),
  );
};

const SANDBOX_CALL_STATUSES = ['offer', 'ringing', 'timeout', 'accept', 'terminate'] as const;

function controlContent(content: Static<typeof Content>): ControlContent {
  switch (content.type) {
    case 'text':
      return { kind: 'text', body: content.body };
    case 'location':
      return { kind: 'location', latitude: content.latitude, longitude: content.longitude, name: content.name ?? null, address: content.address ?? null };
    case 'contact':
      return { kind: 'contact', contact_name: content.contact_name, contact_vcard: content.contact_vcard ?? `BEGIN:VCARD\nVERSION:3.0\nFN:${content.contact_name}\nEND:VCARD` };
    case 'reaction':
      return { kind: 'reaction', quoted_message_id: content.quoted_message_id, emoji: content.emoji };
    case 'poll':
      return { kind: 'poll', name: content.name, options: content.options, selectable_count: content.selectable_count ?? 1, message_secret: null };
    case 'poll_vote':
      return { kind: 'poll_vote', poll_message_id: content.poll_message_id, selected: content.selected };
    case 'edit':
      return { kind: 'edit', quoted_message_id: content.quoted_message_id, body: content.body };
    case 'delete':
      return { kind: 'delete', quoted_message_id: content.quoted_message_id };
    default:
      return {
        kind: 'media',
        media_type: content.type,
        data: content.media?.base64 ? Buffer.from(content.media.base64, 'base64') : null,
        mime_type: content.media?.mimetype ?? null,
        filename: content.media?.filename ?? null,
        caption: content.caption ?? null,
        ptt: content.ptt ?? false,
      };
  }
}

/** The number must be a sandbox number of the caller's project; another project's answers 404. */
async function requireSandboxNumber(pool: Pool, projectId: string, instanceId: string): Promise<void> {
  const { rows } = await pool.query<{ connector: string }>(
    'SELECT connector FROM instances.numbers WHERE instance_id = $1 AND project_id = $2',
    [instanceId, projectId],
  );
  if (!rows[0]) throw gatewayError('not_found');
  if (rows[0].connector !== 'sandbox') throw gatewayError('not_supported');
}
