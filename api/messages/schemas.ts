import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { anyOf } from '../../schemas/phones.js';
import { Country } from '../phone-input.js';

/** A phone (E.164, or as written: checked against its country's numbering plan), or a network jid (a phone, a `@lid` identity or a `@g.us` group). */
const To = Type.String({
  pattern: anyOf('written', 'phoneJid', 'lid', 'groupJid'),
  description: "Recipient: E.164 phone (+5511999998888), a phone as written (+55 11 99999-8888; a national one, (11) 99999-8888, is read in country, else the account's country), or a jid",
  examples: ['+5511999998888'],
});

/** Fields every send takes (spec 4.1). */
const common = {
  to: To,
  country: Type.Optional(Country),
  client_reference: Type.Optional(Type.String({ maxLength: 255, description: 'Echoed back; not a uniqueness key' })),
  instance_id: Type.Optional(Type.String({ maxLength: 100, description: 'Forces this number' })),
  pool_id: Type.Optional(Type.String({ maxLength: 100, description: 'Chooses among the numbers of this pool' })),
};

function send<P extends TProperties>(properties: P): TObject<typeof common & P> {
  return Type.Object({ ...common, ...properties }, { additionalProperties: false });
}

/** A reply and its mentions, on the sends that carry content of their own. */
const reply = {
  quoted_message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'wa_message_id of the message this one replies to' })),
  mentions: Type.Optional(
    Type.Array(Type.String({ pattern: anyOf('e164', 'phoneJid', 'lid') }), { maxItems: 256, uniqueItems: true, description: 'People mentioned: E.164 phones or jids' }),
  ),
};

/** A send that may reply to a message and mention people. */
function replying<P extends TProperties>(properties: P): TObject<typeof common & typeof reply & P> {
  return send({ ...reply, ...properties });
}

/** A media type as RFC 6838 writes it, `type/subtype` with optional `; name=value` parameters: it becomes a header (S3, HTTP). */
export const MediaType = Type.String({
  maxLength: 255,
  pattern: "^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}( *; *[A-Za-z0-9!#$&^_.+-]+=[A-Za-z0-9!#$&^_.+-]+)*$",
  description: 'type/subtype, e.g. image/png or audio/ogg; codecs=opus',
});

const mediaSource = {
  url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048, description: 'Fetched by the gateway; 64 MiB at most' })),
  base64: Type.Optional(Type.String({ description: 'The file itself, base64; 64 MiB at most once decoded' })),
  mimetype: Type.Optional(MediaType),
  filename: Type.Optional(Type.String({ maxLength: 255 })),
};

function Media<P extends TProperties>(extra: P): TObject<typeof mediaSource & P> {
  return Type.Object({ ...mediaSource, ...extra }, { additionalProperties: false, description: 'Exactly one of url or base64' });
}

export const sendBodies = {
  text: replying({ body: Type.String({ minLength: 1, maxLength: 65_536 }) }),
  image: replying({ media: Media({ caption: Type.Optional(Type.String({ maxLength: 4096 })) }) }),
  video: replying({ media: Media({ caption: Type.Optional(Type.String({ maxLength: 4096 })) }) }),
  document: replying({ media: Media({ caption: Type.Optional(Type.String({ maxLength: 4096 })) }) }),
  audio: replying({ media: Media({ ptt: Type.Optional(Type.Boolean({ description: 'Send as a voice note: the audio (MP3, M4A, WAV, OGG, ...) is converted to Opus in OGG' })) }) }),
  sticker: replying({ media: Media({}) }),
  location: replying({
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    name: Type.Optional(Type.String({ maxLength: 1000 })),
    address: Type.Optional(Type.String({ maxLength: 1000 })),
  }),
  contact: replying({
    contact_name: Type.String({ minLength: 1, maxLength: 255 }),
    contact_phone: Type.Optional(Type.String({ pattern: anyOf('e164'), description: 'Used in the generated vCard' })),
    contact_vcard: Type.Optional(Type.String({ maxLength: 10_000, pattern: '^BEGIN:VCARD' })),
  }),
  reaction: send({
    quoted_message_id: Type.String({ minLength: 1, maxLength: 255, description: 'wa_message_id of the message reacted to' }),
    emoji: Type.String({ maxLength: 32, description: 'Empty removes the reaction' }),
  }),
  poll: replying({
    name: Type.String({ minLength: 1, maxLength: 255 }),
    options: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 2, maxItems: 12, uniqueItems: true }),
    selectable_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 12, description: '0 = any number of options' })),
  }),
  buttons: replying({
    body: Type.String({ minLength: 1, maxLength: 4096 }),
    buttons: Type.Array(Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }), title: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 10,
    }),
  }),
  list: replying({
    body: Type.String({ minLength: 1, maxLength: 4096 }),
    sections: Type.Array(
      Type.Object(
        {
          title: Type.Optional(Type.String({ maxLength: 100 })),
          rows: Type.Array(
            Type.Object(
              {
                id: Type.String({ minLength: 1, maxLength: 200 }),
                title: Type.String({ minLength: 1, maxLength: 100 }),
                description: Type.Optional(Type.String({ maxLength: 200 })),
              },
              { additionalProperties: false },
            ),
            { minItems: 1, maxItems: 10 },
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 10 },
    ),
  }),
  otp: send({
    code: Type.String({ pattern: '^[A-Za-z0-9]{4,12}$', description: 'Never stored in clear; only a masked form is kept' }),
    expiry_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440 })),
    body: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Context text; generated in the account language when absent' })),
  }),
  edit: send({
    quoted_message_id: Type.String({ minLength: 1, maxLength: 255, description: "wa_message_id of the number's own message to edit (a text or a caption)" }),
    body: Type.String({ minLength: 1, maxLength: 65_536, description: 'The new text' }),
  }),
  delete: send({
    quoted_message_id: Type.String({ minLength: 1, maxLength: 255, description: "wa_message_id of the number's own message to delete for everyone" }),
  }),
} as const;

export type SendType = keyof typeof sendBodies;
/** The send types that take `quoted_message_id` and `mentions` as a reply: all but those naming a message in their content, and the OTP. */
export type ReplyingType = Exclude<SendType, 'reaction' | 'edit' | 'delete' | 'otp'>;
export const sendTypes = Object.keys(sendBodies) as SendType[];
const replyingTypes: ReadonlySet<SendType> = new Set(sendTypes.filter((type) => 'mentions' in sendBodies[type].properties));
export const isReplying = (type: SendType): type is ReplyingType => replyingTypes.has(type);
export type SendBody<T extends SendType> = Static<(typeof sendBodies)[T]>;
export type AnySendBody = { [T in SendType]: SendBody<T> }[SendType];

export const SendAccepted = Type.Object({
  message_id: Type.String(),
  status: Type.Literal('queued'),
  client_reference: Type.Union([Type.String(), Type.Null()]),
});
export type SendAccepted = Static<typeof SendAccepted>;
