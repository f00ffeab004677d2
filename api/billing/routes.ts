import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { invoicesOf, type InvoiceRow } from '../../processors/index.js';
import { writeAccountSetting } from '../../processors/config/account-settings.js';
import { configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import type { FastifyRequest } from 'fastify';
import { billedTo, billingEntry, BillingIn, billingOut, BillingOut } from './details.js';

const InvoiceOut = Type.Object({
  id: Type.String({ description: 'The payment record the invoice is of' }),
  number: Type.String({ description: 'INV-0001 for the account\'s first invoice, in the order paid' }),
  status: Type.Literal('paid'),
  description: Type.String(),
  currency: Type.String(),
  total: Type.Integer({ description: 'Minor units' }),
  period_start: Type.String({ format: 'date-time', description: 'When it was paid' }),
  period_end: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Until when the plan is paid' }),
  paid_at: Type.String({ format: 'date-time' }),
  payment: Type.Object({ attempt_id: Type.String(), provider: Type.String(), method: Type.String() }),
  bill_to: BillingOut,
});

/**
 * The account's billing (admins only: owner and admin keys; partner-issued keys never, spec 5):
 * `GET/PUT /billing`, the details printed on invoices, one `billing_details` record per account on
 * `gw.config`; `GET /me/invoices` and `/me/invoices/{id}`, an invoice per payment that went through,
 * read from the payments projection of `gw.payments`.
 */
export const billingRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory } = ctx;
  const config = { partnerKeys: false };
  const adminAccount = (request: FastifyRequest) => {
    if (request.auth.role === 'agent') throw gatewayError('forbidden');
    const account = directory.accounts.get(request.auth.accountId);
    if (account === undefined) throw gatewayError('unauthorized');
    return account;
  };
  const invoiceOut = (row: InvoiceRow, billTo: BillingOut) => ({
    id: row.eventId,
    number: `INV-${String(row.number).padStart(4, '0')}`,
    status: 'paid' as const,
    description: `${row.plan[0]?.toUpperCase() ?? ''}${row.plan.slice(1)} plan, monthly`,
    currency: row.currency,
    total: row.amount,
    period_start: row.paidAt.toISOString(),
    period_end: row.periodEnd?.toISOString() ?? null,
    paid_at: row.paidAt.toISOString(),
    payment: { attempt_id: row.attemptId, provider: row.provider, method: row.method },
    bill_to: billTo,
  });

  app.get(
    '/billing',
    { config, schema: { tags: ['account'], summary: 'Billing details printed on invoices (account admins)', response: { 200: BillingOut } } },
    async (request) => {
      adminAccount(request);
      return billingOut(directory.billingOf(request.auth.accountId));
    },
  );

  app.put(
    '/billing',
    {
      config,
      schema: { tags: ['account'], summary: 'Replace the billing details (account admins); what is omitted becomes null', body: BillingIn, response: { 200: BillingOut } },
    },
    async (request) => {
      adminAccount(request);
      await writeAccountSetting(configWriter(ctx), request.auth.accountId, { kind: 'billing_details', ...billingEntry(request.body) }, ctx.clock());
      return billingOut(directory.billingOf(request.auth.accountId));
    },
  );

  app.get(
    '/me/invoices',
    { config, schema: { tags: ['account'], summary: 'Invoices, one per payment made, newest first (account admins)', response: { 200: Type.Object({ data: Type.Array(InvoiceOut) }) } } },
    async (request) => {
      const account = adminAccount(request);
      const billTo = billedTo(account, billingOut(directory.billingOf(account.id)));
      return { data: (await invoicesOf(ctx.clients.pool, account.id)).map((row) => invoiceOut(row, billTo)) };
    },
  );

  app.get(
    '/me/invoices/:id',
    {
      config,
      schema: { tags: ['account'], summary: 'One invoice (account admins)', params: Type.Object({ id: Type.String({ maxLength: 200 }) }), response: { 200: InvoiceOut } },
    },
    async (request) => {
      const account = adminAccount(request);
      const row = (await invoicesOf(ctx.clients.pool, account.id)).find((r) => r.eventId === request.params.id);
      if (row === undefined) throw gatewayError('not_found');
      return invoiceOut(row, billedTo(account, billingOut(directory.billingOf(account.id))));
    },
  );
};
