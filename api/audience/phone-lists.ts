import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { listedPhone, listedPhones, type ListedPhoneRow, type PhoneList } from '../../processors/audience/index.js';
import { listedPhoneId } from '../../schemas/contact-ids.js';
import { anyOf } from '../../schemas/phones.js';
import type { RouteOptions } from '../context.js';
import { Country, requestCountry, requestPhone } from '../phone-input.js';
import { Cursor, decodeCursor, Limit, NextCursor, paginate, type PageKey } from '../conversations/cursor.js';
import { gatewayError } from '../errors.js';
import { audienceRecord, writeAudience } from '../../processors/audience/write.js';

const ListedOut = Type.Object({
  phone: Type.String({ description: 'E.164' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'As given when the phone was listed' }),
  created_at: Type.String({ format: 'date-time' }),
});
const PhoneParams = Type.Object({ phone: Type.String({ maxLength: 64, description: 'E.164 (the + may be sent as %2B)' }) });

const ABOUT: Record<PhoneList, { noun: string; effect: string }> = {
  suppressions: { noun: 'suppression list', effect: 'sends to it answer 422 contact_opted_out, as to an opted-out contact (OTPs and deletions still go)' },
  blocklist: { noun: 'blocklist', effect: 'every send to it answers 422 contact_opted_out, OTPs included (deletions still go)' },
};

function listedOut(row: ListedPhoneRow): Static<typeof ListedOut> {
  return { phone: row.phone, reason: row.reason, created_at: row.created_at.toISOString() };
}

const E164 = new RegExp(anyOf('e164'));

/**
 * A listed phone named in a path: the E.164 it was listed under, written with or without its
 * separators. Not checked against the numbering plan, so an entry listed before the plan was
 * checked can still be read and removed.
 */
function listedPhoneOf(input: string): string {
  const phone = `+${input.replace(/[\s().+-]/g, '')}`;
  if (!E164.test(phone)) throw gatewayError('invalid_request', { detail: 'params/phone: not an E.164 number' });
  return phone;
}

const pageKey = (row: ListedPhoneRow): PageKey => ({ at: row.created_at, id: row.entry_id });

/**
 * `/suppressions` and `/blocklist`: the account's phone lists, kept for ever on `gw.audience`,
 * read at every send (api/messages). Part of the account-wide contact base (spec 5).
 */
export const phoneListRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { pool, producer } = ctx.clients;

  for (const list of ['suppressions', 'blocklist'] as const) {
    const { noun, effect } = ABOUT[list];

    app.post(
      `/${list}`,
      {
        config: { scope: 'contacts:write', partnerKeys: false },
        schema: {
          tags: ['contacts'],
          summary: `Add a phone to the ${noun}: ${effect}`,
          body: Type.Object(
            {
              phone: Type.String({ maxLength: 64, description: "As people write it: E.164, or the national format of `country` (else the account's)" }),
              country: Type.Optional(Country),
              reason: Type.Optional(Type.String({ maxLength: 200 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: ListedOut, 201: ListedOut },
        },
      },
      async (request, reply) => {
        const { accountId } = request.auth;
        const phone = requestPhone(request.body.phone, requestCountry(ctx.directory, accountId, request.body.country), 'body/phone');
        const reason = request.body.reason?.trim() || null;
        const before = await listedPhone(pool, accountId, list, phone);
        if (before !== undefined && before.reason === reason) return reply.code(200).send(listedOut(before));
        const at = Date.now();
        const createdAt = before?.created_at.getTime() ?? at;
        const entryId = listedPhoneId(accountId, list, phone);
        await writeAudience(producer, [audienceRecord(accountId, entryId, { kind: 'listed_phone', list, phone, reason, created_at: createdAt }, at)], async () =>
          (await listedPhone(pool, accountId, list, phone))?.reason === reason,
        );
        return reply.code(before === undefined ? 201 : 200).send({ phone, reason, created_at: new Date(createdAt).toISOString() });
      },
    );

    app.get(
      `/${list}`,
      {
        config: { scope: 'contacts:read', partnerKeys: false },
        schema: {
          tags: ['contacts'],
          summary: `The phones on the ${noun}, most recently listed first`,
          querystring: Type.Object({ limit: Limit, cursor: Type.Optional(Cursor) }),
          response: { 200: Type.Object({ data: Type.Array(ListedOut), next_cursor: NextCursor }) },
        },
      },
      async (request) => {
        const { limit, cursor } = request.query;
        const rows = await listedPhones(pool, request.auth.accountId, list, { limit: limit + 1, after: cursor === undefined ? undefined : decodeCursor(cursor) });
        const page = paginate(rows, limit, pageKey);
        return { data: page.items.map(listedOut), next_cursor: page.next_cursor };
      },
    );

    app.get(
      `/${list}/:phone`,
      {
        config: { scope: 'contacts:read', partnerKeys: false },
        schema: { tags: ['contacts'], summary: `Whether a phone is on the ${noun} (404 not_found when it is not)`, params: PhoneParams, response: { 200: ListedOut } },
      },
      async (request) => {
        const row = await listedPhone(pool, request.auth.accountId, list, listedPhoneOf(request.params.phone));
        if (row === undefined) throw gatewayError('not_found');
        return listedOut(row);
      },
    );

    app.delete(
      `/${list}/:phone`,
      {
        config: { scope: 'contacts:write', partnerKeys: false },
        schema: { tags: ['contacts'], summary: `Remove a phone from the ${noun}`, params: PhoneParams, response: { 204: Type.Null() } },
      },
      async (request, reply) => {
        const { accountId } = request.auth;
        const phone = listedPhoneOf(request.params.phone);
        if ((await listedPhone(pool, accountId, list, phone)) === undefined) throw gatewayError('not_found');
        await writeAudience(producer, [audienceRecord(accountId, listedPhoneId(accountId, list, phone), null, Date.now())], async () =>
          (await listedPhone(pool, accountId, list, phone)) === undefined,
        );
        return reply.code(204).send(null);
      },
    );
  }
};
