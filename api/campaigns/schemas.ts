import { Type, type Static, type TObject } from '@sinclair/typebox';
import { CAMPAIGN_STATUSES, HOURS_PATTERN, MAX_RECIPIENTS, RECIPIENT_STATUSES, type CampaignStatus, type RecipientStatus } from '../../processors/campaigns/index.js';
import { Country } from '../phone-input.js';
import { Cursor, Limit, NextCursor } from '../conversations/cursor.js';
import { sendBodies } from '../messages/schemas.js';

/** The send types a campaign may carry: every type with content of its own but the OTP (an answer to one person). */
export const campaignTypes = ['text', 'image', 'video', 'document', 'audio', 'sticker', 'location', 'contact', 'poll', 'buttons', 'list'] as const;
export type CampaignType = (typeof campaignTypes)[number];
export const mediaCampaignTypes: ReadonlySet<string> = new Set(['image', 'video', 'document', 'audio', 'sticker']);

/** Fields of a send that a campaign sets itself: the recipient, the number, and no reply. */
const PER_SEND = ['to', 'country', 'client_reference', 'instance_id', 'pool_id', 'quoted_message_id', 'mentions'] as const;

function campaignMessage<T extends CampaignType>(type: T) {
  const body = sendBodies[type] as TObject;
  const properties = Object.fromEntries(Object.entries(body.properties).filter(([name]) => !(PER_SEND as readonly string[]).includes(name)));
  // A media campaign may name its file later (POST /campaigns/{id}/image).
  if ('media' in properties) properties.media = Type.Optional(properties.media);
  return Type.Object({ type: Type.Literal(type), ...properties }, { additionalProperties: false });
}

export type MessageIn = { readonly type: CampaignType } & Record<string, unknown>;
export const Message = Type.Unsafe<MessageIn>(Type.Union(campaignTypes.map(campaignMessage), {
  description: 'A message as the send route of its `type` takes it, without `to`, the number or a reply. `{{name}}` in its texts is filled per recipient from the audience\'s variables (contacts give `name` and `phone`). Media is stored once (5 MB at most) and reused by every send.',
}));

const ListedRecipient = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 64, description: 'A phone, E.164 or as written (national numbers are read in `country`, else the account\'s)' }),
    country: Type.Optional(Country),
    time_zone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone of this recipient\'s sending hours' })),
    variables: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }), Type.String({ maxLength: 1024 }))),
  },
  { additionalProperties: false },
);

export const AudienceIn = Type.Union(
  [
    Type.Object({ tag: Type.String({ minLength: 1, maxLength: 100, description: 'The account\'s contacts with this tag' }) }, { additionalProperties: false }),
    Type.Object({ group_id: Type.String({ minLength: 1, maxLength: 64, description: 'The contacts of this contact group' }) }, { additionalProperties: false }),
    Type.Object({ list: Type.Array(ListedRecipient, { minItems: 1, maxItems: 10_000 }) }, { additionalProperties: false }),
    Type.Object(
      { csv: Type.String({ minLength: 1, maxLength: 4_000_000, description: `A CSV list with a header: \`phone\` (or \`to\`), optional \`country\` and \`time_zone\`, every other column a variable; ${MAX_RECIPIENTS} rows at most` }) },
      { additionalProperties: false },
    ),
  ],
  { description: 'Resolved once, at creation' },
);

const Hours = Type.String({ pattern: HOURS_PATTERN, description: 'HH:MM' });
const TimeZone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone, e.g. America/Sao_Paulo' });
export const ScheduleIn = Type.Object(
  {
    start_at: Type.Optional(Type.String({ format: 'date-time', description: 'No send before; absent: as soon as started' })),
    time_zone: Type.Optional(TimeZone),
    sending_hours: Type.Optional(
      Type.Object({ from: Hours, to: Hours }, { additionalProperties: false, description: "Daily window in the recipient's zone (its own, else time_zone, else UTC); `to` is exclusive and may be before `from` (past midnight)" }),
    ),
  },
  { additionalProperties: false },
);
export const SenderIn = Type.Object(
  {
    instance_ids: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100, uniqueItems: true, description: 'Numbers that send it, in turn' })),
    pool_id: Type.Optional(Type.String({ maxLength: 100, description: 'Or a pool whose numbers send it' })),
  },
  { additionalProperties: false, description: 'Absent: any sending number of the project' },
);
const Pace = Type.Integer({ minimum: 1, maximum: 600_000, description: 'Recipients per minute at most; default 60' });
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });

export const CreateCampaign = Type.Object(
  { name: Name, message: Message, audience: AudienceIn, schedule: Type.Optional(ScheduleIn), sender: Type.Optional(SenderIn), pace_per_minute: Type.Optional(Pace), country: Type.Optional(Country) },
  { additionalProperties: false },
);
export type CreateCampaign = Static<typeof CreateCampaign>;
export const EditCampaign = Type.Object(
  { name: Type.Optional(Name), message: Type.Optional(Message), schedule: Type.Optional(ScheduleIn), sender: Type.Optional(SenderIn), pace_per_minute: Type.Optional(Pace) },
  { additionalProperties: false, minProperties: 1 },
);
export type EditCampaign = Static<typeof EditCampaign>;

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const ProgressOut = Type.Object({
  recipients: Type.Integer(),
  pending: Type.Integer({ description: 'Not dispatched yet (waiting for the pace, the sending hours, a number)' }),
  queued: Type.Integer({ description: 'Dispatched to a number' }),
  sent: Type.Integer(),
  delivered: Type.Integer(),
  read: Type.Integer(),
  failed: Type.Integer(),
  replied: Type.Integer({ description: 'Wrote to the sending number after the send' }),
  opted_out: Type.Integer({ description: 'Skipped as opted out at their turn, or opted out after their send' }),
  suppressed: Type.Integer({ description: 'Skipped: on the suppression list at their turn' }),
  blocklisted: Type.Integer({ description: 'Skipped: on the blocklist at their turn' }),
});
export const CampaignOut = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Unsafe<CampaignStatus>(Type.Union(CAMPAIGN_STATUSES.map((s) => Type.Literal(s)))),
  message: Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'The message as stored: its content, media by type and name only' }),
  schedule: Type.Object({
    start_at: Timestamp,
    time_zone: Type.String(),
    sending_hours: Type.Union([Type.Object({ from: Type.String(), to: Type.String() }), Type.Null()]),
  }),
  sender: Type.Object({ instance_ids: Type.Array(Type.String()), pool_id: Type.Union([Type.String(), Type.Null()]) }),
  pace_per_minute: Type.Integer(),
  recipients: Type.Integer(),
  pause_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  started_at: Timestamp,
  paused_at: Timestamp,
  ended_at: Timestamp,
  progress: Type.Optional(ProgressOut),
});
export type CampaignOut = Static<typeof CampaignOut>;
export const InvalidRow = Type.Object({
  index: Type.Integer({ description: 'Row of the list or CSV (0 = first after the header)' }),
  phone: Type.String(),
  reason: Type.String({ description: 'invalid_phone, invalid_time_zone or duplicate' }),
  problem: Type.Optional(Type.String({ description: 'For invalid_phone: what is wrong with it' })),
});
export const CreatedOut = Type.Object({ ...CampaignOut.properties, invalid_rows: Type.Array(InvalidRow) });

export const RecipientOut = Type.Object({
  index: Type.Integer(),
  to: Type.String({ description: 'E.164 phone' }),
  contact_id: Type.Union([Type.String(), Type.Null()]),
  status: Type.Unsafe<RecipientStatus>(Type.Union(RECIPIENT_STATUSES.map((s) => Type.Literal(s)))),
  skip_reason: Type.Union([Type.String(), Type.Null()], { description: 'opted_out, suppressed or blocklisted, when skipped' }),
  message_id: Type.String({ description: "The recipient's send: the same message id whatever happens, so a recipient is messaged once" }),
  instance_id: Type.Union([Type.String(), Type.Null()]),
  error_code: Type.Union([Type.String(), Type.Null()]),
  dispatched_at: Timestamp,
  sent_at: Timestamp,
  delivered_at: Timestamp,
  read_at: Timestamp,
  failed_at: Timestamp,
  replied_at: Timestamp,
});

export const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const ListQuery = Type.Object({ status: Type.Optional(Type.Unsafe<CampaignStatus>(Type.Union(CAMPAIGN_STATUSES.map((s) => Type.Literal(s))))), limit: Limit, cursor: Type.Optional(Cursor) });
export const RecipientsQuery = Type.Object({ status: Type.Optional(Type.Unsafe<RecipientStatus>(Type.Union(RECIPIENT_STATUSES.map((s) => Type.Literal(s))))), limit: Limit, cursor: Type.Optional(Cursor) });
export const ImageIn = Type.Object(
  {
    media: Type.Object(
      {
        url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })),
        base64: Type.Optional(Type.String()),
        mimetype: Type.Optional(Type.String({ maxLength: 255 })),
        filename: Type.Optional(Type.String({ maxLength: 255 })),
      },
      { additionalProperties: false, description: 'Exactly one of url or base64; 5 MB at most' },
    ),
  },
  { additionalProperties: false },
);
export { NextCursor };
