import { Type, type TSchema } from '@sinclair/typebox';
import { PHONE_PROBLEMS, patterns, type PhoneProblem } from '../../schemas/phones.js';
import { Country } from '../phone-input.js';

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
  time_zone: Nullable(Type.String({ description: "IANA time zone (America/Sao_Paulo); a campaign to contacts keeps its sending hours in it. Null when unknown: the campaign's zone applies" })),
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
          phone: Type.String({ maxLength: 64, description: 'E.164, or as written (spaces, dots, dashes, parentheses); a national number is read in the row\'s country, else the import\'s, else the account\'s' }),
          country: Type.Optional(Country),
          name: Type.Optional(Type.String({ maxLength: 200, description: 'Replaces the name; an empty string clears it' })),
          tags: Type.Optional(Type.Array(Tag, { maxItems: 50, description: 'Replaces the tags' })),
          time_zone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA time zone (America/Sao_Paulo); replaces the contact\'s, an empty string clears it. One that is not a zone refuses the import with 400 invalid_request' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_IMPORT_ROWS, description: 'A row whose phone is not one, or whose text holds a NUL or a lone surrogate, is counted invalid and listed; the other rows are imported' },
    ),
    country: Type.Optional(Country),
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
        description: 'invalid_phone: not a phone in use (problem says why); invalid_text: a field holds a NUL or a lone UTF-16 surrogate',
      }),
      problem: Type.Optional(
        Type.Unsafe<PhoneProblem>({
          type: 'string',
          enum: [...PHONE_PROBLEMS],
          description:
            'With invalid_phone: not_a_number, missing_country (a national number and no country), unknown_country, invalid_country_code, too_short, too_long, invalid_length, invalid_for_region (a number of the right length the country does not give out)',
        }),
      ),
    }),
  ),
});

export const CheckBody = Type.Object(
  {
    phones: Type.Array(
      Type.String({ pattern: `^(${patterns.written}|[0-9]+@lid)$`, description: 'E.164 or a phone as written (a national one needs a country), or a privacy identifier ending @lid' }),
      { minItems: 1, maxItems: MAX_CHECK_PHONES },
    ),
    country: Type.Optional(Country),
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
