import { Type, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

const Direction = Type.Union([Type.Literal('in'), Type.Literal('out')], {
  description: 'in: received from the customer; out: our send, or the number owner writing from the phone',
});

export const ConversationOut = Type.Object({
  jid: Type.String({ description: "The customer's phone jid (the @lid while unresolved) or the group jid" }),
  phone: Nullable(Type.String({ description: 'E.164 phone of a phone jid' })),
  is_group: Type.Boolean(),
  name: Nullable(Type.String({ description: "Group subject, or the customer's display name" })),
  last_instance_id: Type.String({ description: 'The number that last talked in the conversation; sends stay on it while it is connected' }),
  instance_ids: Type.Array(Type.String(), { description: 'Every number of the project that took part' }),
  unread_count: Type.Integer({ description: 'Received messages after the last outgoing one' }),
  last_message: Type.Object({
    message_id: Type.String(),
    type: Type.String(),
    direction: Direction,
    preview: Nullable(Type.String({ description: 'Start of the body (OTP: the context text, never the code)' })),
    timestamp: Timestamp,
  }),
});

const Status = Type.Union([
  Type.Literal('queued'),
  Type.Literal('sent'),
  Type.Literal('delivered'),
  Type.Literal('read'),
  Type.Literal('failed'),
], { description: 'Our sends: queued, then forward only through sent, delivered, read; failed is final' });

/** Spec 2.4 for received messages, flattened (envelope and payload fields side by side); our sends add their status. */
export const MessageOut = Type.Object({
  message_id: Type.String(),
  type: Type.String({
    description: 'text, image, video, audio, document, sticker, location, contact, reaction, poll, poll_vote; our sends also buttons, list, otp',
  }),
  direction: Direction,
  origin: Type.String({ description: 'customer, external (the owner from the phone), api or campaign (our sends)' }),
  instance_id: Type.String({ description: 'The number that received or sent it' }),
  timestamp: Timestamp,
  wa_message_id: Nullable(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  sender: Type.Optional(Type.Object({ jid: Type.String(), lid: Nullable(Type.String()), name: Nullable(Type.String()) })),
  body: Nullable(Type.String({ description: 'Text, caption, place name, contact name, emoji, poll question or chosen options' })),
  quoted_id: Type.Optional(Type.String({ description: 'wa_message_id of the message replied or reacted to' })),
  quoted_participant: Type.Optional(Type.String()),
  group: Type.Optional(Type.Object({ jid: Type.String(), name: Nullable(Type.String()) })),
  mentions: Type.Array(Type.String()),
  media: Type.Optional(
    Type.Object({
      id: Type.Optional(Type.String({ description: 'Absent on our sends' })),
      url: Type.Optional(Type.String({ description: 'Pre-signed, time-limited; never store it' })),
      mime_type: Nullable(Type.String()),
      filename: Nullable(Type.String()),
      size: Type.Optional(Type.Integer()),
    }),
  ),
  latitude: Type.Optional(Type.Number()),
  longitude: Type.Optional(Type.Number()),
  poll: Type.Optional(Type.Object({ name: Type.String(), options: Type.Array(Type.String()) })),
  poll_vote: Type.Optional(Type.Object({ poll_message_id: Type.String(), selected: Type.Array(Type.String()) })),
  code_masked: Type.Optional(Type.String({ description: 'OTP sends: the masked code' })),
  client_reference: Type.Optional(Type.String()),
  status: Type.Optional(Status),
  queued_at: Type.Optional(Timestamp),
  sent_at: Type.Optional(Timestamp),
  delivered_at: Type.Optional(Timestamp),
  read_at: Type.Optional(Timestamp),
  failed_at: Type.Optional(Timestamp),
  error_code: Type.Optional(Type.String({ description: 'Why a send failed (an error code of the API)' })),
  edited_at: Type.Optional({ ...Timestamp, description: 'When its author last edited it; body is the edited text' }),
  deleted_at: Type.Optional({ ...Timestamp, description: 'When its author deleted it for everyone; body and media are gone' }),
});
