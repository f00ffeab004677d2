import { Type, type TSchema } from '@sinclair/typebox';
import { webhookEventTypes } from '../../events/catalogue.js';
import { MAX_URL_LENGTH } from './url.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'Absolute https or http URL without user info; private, loopback and localhost hosts are refused',
});
const EventTypes = Type.Array(Type.String({ maxLength: 100 }), {
  maxItems: 100,
  description: `Events delivered (spec 6.1): ${webhookEventTypes.join(', ')}. Empty or absent: all of them. Repeats are dropped; qr_code, pairing_code and instance.status are accepted but never delivered (stream only)`,
});
// Null first: with type coercion on, a null tried against the string branch first would become "".
const Description = Type.Union([Type.Null(), Type.String({ maxLength: 500 })], { description: 'What the webhook is for' });

export const WebhookIn = Type.Object(
  { url: Url, event_types: Type.Optional(EventTypes), enabled: Type.Optional(Type.Boolean({ default: true })), description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const WebhookPatch = Type.Object(
  { url: Type.Optional(Url), event_types: Type.Optional(EventTypes), enabled: Type.Optional(Type.Boolean()), description: Type.Optional(Description) },
  { additionalProperties: false, minProperties: 1 },
);

export const WebhookOut = Type.Object({
  id: Type.String({ description: '`wh_...`' }),
  url: Type.String(),
  event_types: Type.Array(Type.String(), { description: 'As registered; empty means every event' }),
  enabled: Type.Boolean({ description: 'Deliveries on' }),
  description: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const WebhookWithSecret = Type.Composite([
  WebhookOut,
  Type.Object({ secret: Type.String({ description: '`whsec_...` signing secret: shown only in this answer' }) }),
]);

export const WebhookParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const EventChoice = Type.Object(
  { event_type: Type.Optional(Type.String({ maxLength: 100 })) },
  { additionalProperties: false },
);

export const FiredEvent = Type.Object({ event_id: Type.String(), event_type: Type.String() });

export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
  description: 'pending: a retry is due; delivered: an attempt got a 2xx; failed: no attempt follows and none was delivered',
});

export const DeliveryOut = Type.Object({
  id: Type.String({ description: 'Delivery id: one event to this webhook, the same across its attempts' }),
  event_id: Type.String(),
  event_type: Type.String(),
  trigger: Type.String({ description: 'scheduled (a real event), manual (trigger or redeliver) or test' }),
  status: DeliveryStatus,
  attempt_count: Type.Integer({ description: 'Attempts made so far' }),
  last_attempt_at: Timestamp,
  last_response_status: Nullable(Type.Integer({ description: 'HTTP status of the last attempt, when a response came' })),
  last_error: Nullable(Type.String({ description: 'Transport error of the last attempt (timeout, refused, ...)' })),
  last_response_excerpt: Nullable(Type.String({ description: 'Start of the last response body' })),
  next_attempt_at: Nullable(Timestamp),
  created_at: Timestamp,
});

const AttemptOut = Type.Object({
  id: Type.String(),
  attempt: Type.Integer({ description: '1-based' }),
  timestamp: Timestamp,
  url: Type.String(),
  outcome: Type.String({ description: 'delivered, failed_retryable, failed_final or timed_out' }),
  response_status: Nullable(Type.Integer()),
  response_excerpt: Nullable(Type.String()),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer(),
  next_attempt_at: Nullable(Timestamp),
});

export const DeliveryDetailOut = Type.Composite([
  DeliveryOut,
  Type.Object({
    body: Type.Unknown({ description: 'The JSON body posted (the envelope of spec 2.5); null until the first attempt is recorded' }),
    attempts: Type.Array(AttemptOut, { description: 'First to last' }),
  }),
]);
