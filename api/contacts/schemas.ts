import { Type, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

export const MAX_IMPORT_ROWS = 1000;
export const MAX_CHECK_PHONES = 100;

export const Tag = Type.String({ minLength: 1, maxLength: 64 });

export const ContactOut = Type.Object({
  id: Type.String(),
  phone: Type.String({ description: 'E.164; unique in the account' }),
  name: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  opted_out: Type.Boolean({ description: 'Sends to an opted-out contact answer 422 contact_opted_out' }),
  opted_out_at: Nullable(Timestamp),
  opt_out_source: Nullable(Type.String({ description: 'api, or keyword:inbound when the customer replied with an opt-out keyword' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ContactFilters = Type.Object({
  tag: Type.Optional(Tag),
  opted_out: Type.Optional(Type.Boolean()),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Part of the name or phone, case-insensitive' })),
});

export const ImportBody = Type.Object(
  {
    rows: Type.Array(
      Type.Object(
        {
          phone: Type.String({ maxLength: 64, description: 'E.164; spaces, dots, dashes and parentheses are ignored' }),
          name: Type.Optional(Type.String({ maxLength: 200, description: 'Replaces the name; an empty string clears it' })),
          tags: Type.Optional(Type.Array(Tag, { maxItems: 50, description: 'Replaces the tags' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_IMPORT_ROWS, description: 'A row whose text holds a NUL or a lone surrogate is counted invalid (invalid_text), not refused with the request' },
    ),
    dry_run: Type.Optional(Type.Boolean({ default: false, description: 'Count what the import would do, and write nothing' })),
  },
  { additionalProperties: false },
);

export const ImportResult = Type.Object({
  dry_run: Type.Boolean(),
  created: Type.Integer(),
  updated: Type.Integer(),
  unchanged: Type.Integer({ description: 'Rows equal to the contact already there: nothing is written for them' }),
  invalid: Type.Integer(),
  invalid_rows: Type.Array(
    Type.Object({
      index: Type.Integer({ description: 'Position of the row in rows, from 0' }),
      phone: Type.String(),
      reason: Type.Union([Type.Literal('invalid_phone'), Type.Literal('invalid_text')], {
        description: 'invalid_phone: not a phone; invalid_text: a field holds a NUL or a lone UTF-16 surrogate',
      }),
    }),
  ),
});

export const CheckBody = Type.Object(
  {
    phones: Type.Array(
      Type.String({ pattern: '^(\\+[1-9][0-9]{6,14}|[0-9]+@lid)$', description: 'E.164 phone, or a privacy identifier ending @lid' }),
      { minItems: 1, maxItems: MAX_CHECK_PHONES },
    ),
  },
  { additionalProperties: false },
);

export const CheckOut = Type.Object({
  data: Type.Array(
    Type.Object({
      phone: Type.String({ description: 'As asked' }),
      on_network: Type.Boolean(),
      jid: Nullable(Type.String({ description: 'The jid to message; null when not on the network' })),
      lid: Type.Optional(Type.String()),
    }),
  ),
});
