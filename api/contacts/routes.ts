import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { Pool } from 'pg';
import { contactById, contactsByPhone, listContacts, type ContactFilter, type ContactRow } from '../../processors/contacts/index.js';
import type { PhoneCheck } from '../../schemas/records.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { Cursor, decodeCursor, Limit, NextCursor, paginate, type PageKey } from '../conversations/cursor.js';
import { CSV_HEADER, csvLine } from './csv.js';
import { planImport, rowPhone } from './import.js';
import { requestCountry, requestPhone } from '../phone-input.js';
import type { PhoneChecker } from './network-checks.js';
import { writeContacts, type ContactValues } from '../../processors/contacts/write.js';
import { CheckBody, CheckOut, ContactFilters, ContactOut, ImportBody, ImportResult } from './schemas.js';
import { IMPORT_BODY_LIMIT } from '../body-limits.js';
import { isTimeZone } from '../../processors/campaigns/index.js';

export interface ContactRouteOptions extends RouteOptions {
  /** Answers POST /contacts/check through a number of the project. */
  readonly network: PhoneChecker;
}

function contactOut(row: ContactRow): Static<typeof ContactOut> {
  return {
    id: row.contact_id,
    phone: row.phone,
    name: row.name,
    tags: row.tags,
    time_zone: row.time_zone,
    opted_out: row.opted_out,
    opted_out_at: row.opted_out_at?.toISOString() ?? null,
    opt_out_source: row.opt_out_source,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function filterOf(query: Static<typeof ContactFilters>): ContactFilter {
  return { tag: query.tag, optedOut: query.opted_out, q: query.q };
}

const pageKey = (row: ContactRow): PageKey => ({ at: row.created_at, id: row.contact_id });

const EXPORT_PAGE = 1000;

/**
 * Every contact the filter selects, as CSV lines, read a page at a time. The first page is read
 * before the answer starts: a failure there is an error answer, not a connection cut mid-file.
 */
async function exportCsv(pool: Pool, accountId: string, filter: ContactFilter): Promise<AsyncGenerator<string>> {
  const first = await listContacts(pool, accountId, filter, { limit: EXPORT_PAGE });
  return exportPages(pool, accountId, filter, first);
}

async function* exportPages(pool: Pool, accountId: string, filter: ContactFilter, first: ContactRow[]): AsyncGenerator<string> {
  yield CSV_HEADER;
  let rows = first;
  for (;;) {
    for (const row of rows) yield csvLine(row);
    const last = rows[rows.length - 1];
    if (rows.length < EXPORT_PAGE || last === undefined) return;
    rows = await listContacts(pool, accountId, filter, { limit: EXPORT_PAGE, after: pageKey(last) });
  }
}

/**
 * The account-wide contact base (spec 4.3 and 5): import, list, export and opt-out, which
 * partner-issued keys do not reach, and the network check, which they do.
 */
export const contactRoutes: FastifyPluginAsyncTypebox<ContactRouteOptions> = async (app, { ctx, network }) => {
  const { pool, producer } = ctx.clients;

  app.post(
    '/contacts/import',
    {
      config: { scope: 'contacts:write', partnerKeys: false, textCheckedByHandler: ['body/rows'] },
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        tags: ['contacts'],
        summary: 'Upsert up to 1000 contacts by phone; dry_run only counts',
        body: ImportBody,
        response: { 200: ImportResult },
      },
    },
    async (request) => {
      const { accountId } = request.auth;
      const { rows, dry_run: dryRun = false } = request.body;
      const zoneless = rows.findIndex((row) => row.time_zone !== undefined && row.time_zone.trim() !== '' && !isTimeZone(row.time_zone.trim()));
      if (zoneless >= 0) throw gatewayError('invalid_request', { detail: `rows/${zoneless}/time_zone is not an IANA time zone` });
      const country = requestCountry(ctx.directory, accountId, request.body.country);
      const phones = rows.map((row) => rowPhone(row, country));
      const existing = await contactsByPhone(pool, accountId, phones.flatMap((phone) => (phone.ok ? [phone.e164] : [])));
      const plan = planImport(accountId, rows, phones, new Map(existing.map((row) => [row.phone, valuesOf(row)])));
      if (!dryRun && plan.upserts.length > 0) {
        await writeContacts(producer, accountId, plan.upserts.map((contact) => ({ kind: 'upserted', contact })), 'import', Date.now());
      }
      return {
        dry_run: dryRun,
        created: plan.created,
        updated: plan.updated,
        unchanged: plan.unchanged,
        invalid: plan.invalidRows.length,
        invalid_rows: plan.invalidRows,
      };
    },
  );

  app.get(
    '/contacts',
    {
      config: { scope: 'contacts:read', partnerKeys: false },
      schema: {
        tags: ['contacts'],
        summary: 'The contacts of the account, newest first',
        querystring: Type.Composite([ContactFilters, Type.Object({ limit: Limit, cursor: Type.Optional(Cursor) })]),
        response: { 200: Type.Object({ data: Type.Array(ContactOut), next_cursor: NextCursor }) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      const rows = await listContacts(pool, request.auth.accountId, filterOf(request.query), { limit: limit + 1, after });
      const page = paginate(rows, limit, pageKey);
      return { data: page.items.map(contactOut), next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/contacts/export',
    {
      config: { scope: 'contacts:read', partnerKeys: false },
      schema: {
        tags: ['contacts'],
        summary: 'CSV export of the contacts the list filters select',
        querystring: ContactFilters,
        response: {
          200: {
            description: 'One header row, then a contact a row',
            // Streamed as it is read: the schema documents the body, the type says what the handler sends.
            content: { 'text/csv': { schema: Type.Unsafe<Readable>(Type.String()) } },
          },
        },
      },
    },
    async (request, reply) => {
      const lines = await exportCsv(pool, request.auth.accountId, filterOf(request.query));
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="contacts.csv"')
        .send(Readable.from(lines));
    },
  );

  app.post(
    '/contacts/:id/optout',
    {
      config: { scope: 'contacts:write', partnerKeys: false },
      schema: {
        tags: ['contacts'],
        summary: 'Opt a contact out; emits no webhook (spec 4.3)',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: ContactOut },
      },
    },
    async (request) => {
      const { accountId } = request.auth;
      const row = await contactById(pool, accountId, request.params.id);
      if (!row) throw gatewayError('not_found');
      if (row.opted_out) return contactOut(row);
      const at = Date.now();
      await writeContacts(producer, accountId, [{ kind: 'opted_out', contact: valuesOf(row) }], 'api', at);
      return contactOut({ ...row, opted_out: true, opted_out_at: new Date(at), opt_out_source: 'api', updated_at: new Date(at) });
    },
  );

  app.post(
    '/contacts/check',
    {
      config: { scope: 'contacts:check' },
      schema: {
        tags: ['contacts'],
        summary: 'Whether phones (or lids) are on the messaging network',
        body: CheckBody,
        response: { 200: CheckOut },
      },
    },
    async (request) => {
      const country = requestCountry(ctx.directory, request.auth.accountId, request.body.country);
      const asked = request.body.phones.map((phone, i) => (phone.endsWith('@lid') ? phone : requestPhone(phone, country, `body/phones/${i}`)));
      const checks = await network.check(request.auth.projectId, asked);
      // Each answer names the phone as it was asked, however it was written.
      return { data: checks.map((check, i) => checkOut({ ...check, phone: request.body.phones[i] ?? check.phone })) };
    },
  );
};

function checkOut({ phone, on_network, jid, lid }: PhoneCheck): Static<typeof CheckOut>['data'][number] {
  return { phone, on_network, jid, ...(lid !== null && { lid }) };
}

function valuesOf(row: ContactRow): ContactValues {
  return { id: row.contact_id, phone: row.phone, name: row.name, tags: row.tags, time_zone: row.time_zone };
}
