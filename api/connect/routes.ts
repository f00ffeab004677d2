import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { codeMail } from '../../connectors/email/templates.js';
import type { Mailer } from '../../connectors/email/smtp.js';
import { PRO_PRICES, type PaymentProvider } from '../../connectors/payments/provider.js';
import type { ConnectionEntry } from '../../processors/connections/view.js';
import { includesConnect, planNamed } from '../../processors/usage/plans.js';
import { asInstanceId, type AccountId, type ProjectId } from '../../schemas/ids.js';
import { currencyFor } from '../../shared/currency.js';
import { createAccount } from '../../processors/config/accounts.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';
import { createInstance } from '../../processors/instances/create.js';
import { requestOfNumber, type NumberRequest } from '../instances/pairing.js';
import { projectInstance, projectInstances, untilProjected, untilRead } from '../../processors/instances/queries.js';
import { issueConnectCode } from '../partner/connect-codes.js';
import { NumberOut } from '../partner/connection-out.js';
import type { RateLimiter } from '../plugins/rate-limit.js';
import type { StreamHub } from '../streams/index.js';
import { lastEventIdOf, MAX_CURSOR_LENGTH, serveStream } from '../streams/index.js';
import { EmailCodes } from '../email-codes.js';
import { authenticateSessions } from './session-auth.js';
import { countryCode } from '../../schemas/phones.js';

/** How the component names the service to a partner's customers, and where its terms and privacy policy are. */
export interface ServiceIdentity {
  readonly name: string;
  readonly termsUrl: string | null;
  readonly privacyUrl: string | null;
}

export interface ConnectRouteOptions extends RouteOptions {
  readonly takeToken: RateLimiter;
  readonly service: ServiceIdentity;
  readonly mailer: Pick<Mailer, 'send'>;
  readonly payments: PaymentProvider;
  readonly hub: StreamHub;
  /** Keys the HMAC of e-mail codes. */
  readonly codeKey: string;
  readonly heartbeatMs: number;
}

/** Screens of the component (spec 3.2). */
type Step = 'account' | 'verify_email' | 'payment' | 'number' | 'manage' | 'revoked';

const config = { surface: 'connect' as const };
const tags = ['connect'];
const NumberParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const Ok = Type.Object({
  step: Type.String(),
  status: Type.String(),
  email_hint: Type.Optional(Type.String()),
  code_attempts_left: Type.Optional(Type.Integer({ minimum: 0, description: 'Wrong attempts the e-mailed code still takes; 0: used up, send a new one' })),
});
const STREAMED = new Set(['qr_code', 'pairing_code', 'instance.status']);
/** How long the instances projection may trail the stream before a number it announced counts as not there. */
const STREAM_AHEAD_MS = 5_000;

/** `a***@shop.test`: enough for the customer to recognise the address, not to learn it. */
export function maskEmail(email: string): string {
  const [local = '', domain = ''] = email.split('@');
  return `${local.slice(0, 1)}***@${domain}`;
}

/**
 * The component's API (spec 4.5): bootstrap, the account step (create, or link by an e-mailed
 * code), payment, numbers and their pairing stream, completion. Every route runs on the session
 * of one connection (`request.connect`) and moves it only through the connection writer.
 */
export const connectRoutes: FastifyPluginAsyncTypebox<ConnectRouteOptions> = async (app, options) => {
  const { ctx, payments, mailer } = options;
  const { pool, producer } = ctx.clients;
  const codes = new EmailCodes(pool, options.codeKey, 'connect');
  authenticateSessions(app, { pool, directory: ctx.directory, connections: ctx.connections, clock: ctx.clock, takeToken: options.takeToken });


  const stepOf = async (connection: ConnectionEntry): Promise<Step> => {
    switch (connection.to_status) {
      case 'revoked':
        return 'revoked';
      case 'pending_account':
        return (await codes.pending(connection.connection_id)) === undefined ? 'account' : 'verify_email';
      case 'pending_payment':
      case 'suspended':
        return 'payment';
      case 'pending_number':
        return 'number';
      case 'active':
        return 'manage';
    }
  };

  const answer = async (connection: ConnectionEntry) => {
    const pending = connection.to_status === 'pending_account' ? await codes.pending(connection.connection_id) : undefined;
    return {
      step: await stepOf(connection),
      status: connection.to_status,
      ...(pending === undefined ? {} : { email_hint: maskEmail(pending.email), code_attempts_left: pending.attemptsLeft }),
    };
  };

  /** Sends a code proving `email` owns `accountId`, in the customer's language. */
  const sendCode = async (request: FastifyRequest, target: { email: string; accountId: string }) => {
    const { connection, partner, locale } = request.connect;
    const code = await codes.issue(connection.connection_id, target, ctx.clock());
    await mailer.send({ to: target.email, ...codeMail(locale, code, partner.name) });
  };

  /** The linked account and project, or 409 `account_required`. */
  const linked = (connection: ConnectionEntry): { accountId: AccountId; projectId: ProjectId } => {
    if (connection.to_status === 'pending_account' || connection.account_id === null || connection.project_id === null) throw gatewayError('account_required');
    return { accountId: connection.account_id, projectId: connection.project_id };
  };

  const requirePaid = (connection: ConnectionEntry) => {
    const { accountId } = linked(connection);
    if (!includesConnect(ctx.directory.accounts.get(accountId)?.plan ?? 'free')) throw gatewayError('payment_required');
    return linked(connection);
  };

  /**
   * A connected number of the project. The stream the component watches and the instances
   * projection follow the log apart: when the stream has just said a number connected, the
   * projection is given a moment to say so too, so `complete` sent on that event is not refused.
   */
  const connectedNumber = async (projectId: string) => {
    const live = (status: unknown) => status === 'connected' || status === 'warming';
    const read = async () => (await projectInstances(pool, projectId)).find((n) => live(n.status));
    const announced = options.hub.findRecent(
      (event) => event.project_id === projectId && event.event_type === 'instance.status' && live((JSON.parse(event.payload_json) as { status?: unknown }).status),
    );
    return announced === undefined ? read() : untilRead(read, STREAM_AHEAD_MS);
  };

  const linkTo = async (request: FastifyRequest, accountId: AccountId) => {
    const project = ctx.directory.defaultProjectOf(accountId);
    if (project === undefined) throw gatewayError('account_not_found');
    return ctx.connectionWriter.linkAccount(request.connect.connection.connection_id, { accountId, projectId: project.id });
  };

  app.get(
    '/connect/bootstrap',
    {
      config,
      schema: {
        tags,
        summary: 'Screen state of the component: partner, customer, step, plan, numbers, the payment provider',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async (request) => {
      const { connection, partner, session } = request.connect;
      const currency = currencyFor(connection.customer.country);
      const found = connection.to_status === 'pending_account' ? ctx.directory.accountOfEmail(connection.customer.email) : undefined;
      const numbers = connection.project_id === null ? [] : await projectInstances(pool, connection.project_id);
      const lastPayment = connection.account_id === null ? undefined : await payments.latest(connection.account_id);
      return {
        ...(await answer(connection)),
        connection: { id: connection.connection_id, external_id: connection.external_id },
        session: { id: session.sessionId, expires_at: new Date(session.expiresAt).toISOString() },
        service: { name: options.service.name, terms_url: options.service.termsUrl, privacy_url: options.service.privacyUrl },
        partner: { name: partner.name, logo_url: partner.logo_url, scopes: partner.key_scopes },
        customer: { ...connection.customer },
        ...(found === undefined ? {} : { existing: found.role }),
        plan: {
          name: 'pro',
          price: { amount: PRO_PRICES[currency], currency, interval: 'month' },
          methods: await payments.methods(currency),
          ...(connection.to_status === 'suspended' ? { payment_notice: 'lapsed' } : {}),
        },
        payment: { provider: payments.name, publishable_key: payments.publishableKey, status: lastPayment?.status ?? 'none' },
        numbers: numbers.map((n) => ({ id: n.instance_id, phone: n.phone, status: n.status })),
      };
    },
  );

  app.post(
    '/connect/account',
    { config, schema: { tags, summary: 'Create the account, or send a code when the e-mail already has one', response: { 200: Ok } } },
    async (request) => {
      const { connection } = request.connect;
      if (connection.to_status !== 'pending_account') return answer(connection);
      const email = connection.customer.email;
      const found = ctx.directory.accountOfEmail(email);
      if (found?.role === 'member') throw gatewayError('account_admin_required');
      if (found !== undefined) {
        await sendCode(request, { email, accountId: found.accountId });
        return answer(connection);
      }
      const created = await createAccount(
        producer,
        {
          name: connection.customer.company ?? connection.customer.name ?? email,
          email,
          locale: request.connect.locale,
          country: countryCode(connection.customer.country ?? ''),
          plan: 'free',
        },
        async () => undefined,
      );
      await ctx.directory.until(() => ctx.directory.defaultProjectOf(created.account_id) !== undefined, WRITE_DEADLINE_MS);
      return answer(await linkTo(request, created.account_id as AccountId));
    },
  );

  app.post(
    '/connect/account/link',
    {
      config,
      schema: {
        tags,
        summary: 'Link an existing account: a code goes to the e-mail (empty: the one the partner sent)',
        body: Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })) }, { additionalProperties: false, examples: [{ email: 'owner@padaria.example' }, {}] }),
        response: { 200: Ok },
      },
    },
    async (request) => {
      const { connection } = request.connect;
      if (connection.to_status !== 'pending_account') return answer(connection);
      const email = (request.body.email?.trim() || connection.customer.email).toLowerCase();
      const found = ctx.directory.accountOfEmail(email);
      if (found === undefined) throw gatewayError('account_not_found');
      if (found.role !== 'admin') throw gatewayError('account_admin_required');
      await sendCode(request, { email, accountId: found.accountId });
      return answer(connection);
    },
  );

  app.post(
    '/connect/account/verify',
    {
      config,
      schema: {
        tags,
        summary: 'Confirm the six-digit code: the account is linked',
        body: Type.Object({ code: Type.String({ maxLength: 20 }) }, { additionalProperties: false, examples: [{ code: '482913' }] }),
        response: { 200: Ok },
      },
    },
    async (request) => {
      const { connection } = request.connect;
      if (connection.to_status !== 'pending_account') return answer(connection);
      const code = request.body.code.trim();
      if (!/^\d{6}$/.test(code)) throw gatewayError('invalid_code');
      const proven = await codes.confirm(connection.connection_id, code, ctx.clock());
      return answer(await linkTo(request, proven.accountId as AccountId));
    },
  );

  app.post(
    '/connect/account/resend',
    { config, schema: { tags, summary: 'Send the code again to the same e-mail (once a minute)', response: { 200: Ok } } },
    async (request) => {
      const { connection } = request.connect;
      const pending = await codes.pending(connection.connection_id);
      if (pending === undefined || connection.to_status !== 'pending_account') throw gatewayError('invalid_code');
      await sendCode(request, { email: pending.email, accountId: pending.accountId });
      return answer(connection);
    },
  );

  app.post(
    '/connect/account/link/cancel',
    { config, schema: { tags, summary: 'Leave the code step (change e-mail, or create a new account)', response: { 200: Ok } } },
    async (request) => {
      await codes.cancel(request.connect.connection.connection_id);
      return answer(request.connect.connection);
    },
  );

  app.post(
    '/connect/checkout',
    {
      config,
      schema: {
        tags,
        summary: 'Subscribe to Pro by card or Pix; returns the client secret for the payment form',
        body: Type.Object({ method: Type.Union([Type.Literal('card'), Type.Literal('pix')]) }, { additionalProperties: false, examples: [{ method: 'pix' }] }),
        response: { 200: Type.Object({ client_secret: Type.String(), attempt_id: Type.String(), method: Type.String(), status: Type.String() }) },
      },
    },
    async (request) => {
      const { connection } = request.connect;
      const { accountId } = linked(connection);
      if (includesConnect(ctx.directory.accounts.get(accountId)?.plan ?? 'free')) throw gatewayError('already_paid');
      const { customer } = connection;
      return payments.checkout(
        {
          accountId,
          connectionId: connection.connection_id,
          method: request.body.method,
          currency: currencyFor(customer.country),
          email: customer.email,
          name: customer.company ?? customer.name ?? customer.email,
          locale: request.connect.locale,
        },
        ctx.clock(),
      );
    },
  );

  app.get(
    '/connect/payment',
    {
      config,
      schema: {
        tags,
        summary: 'Payment confirmation, polled while waiting',
        response: {
          200: Type.Object({
            status: Type.String({ description: 'none, pending, processing, paid, failed, canceled or lapsed' }),
            method: Type.Union([Type.String(), Type.Null()]),
            attempt_id: Type.Union([Type.String(), Type.Null()]),
            period_end: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
            step: Type.String(),
          }),
        },
      },
    },
    async (request) => {
      let { connection } = request.connect;
      const { accountId } = linked(connection);
      const paid = includesConnect(ctx.directory.accounts.get(accountId)?.plan ?? 'free');
      // The sweeper moves the connection too; a poll that sees the plan paid moves it at once.
      if (paid && (connection.to_status === 'pending_payment' || connection.to_status === 'suspended')) {
        connection = await ctx.connectionWriter.check(connection.connection_id, 'payment');
      }
      const attempt = await payments.latest(accountId);
      // Paid but not Pro yet: the payments processor has not applied the payment; the component keeps polling.
      const status = paid ? 'paid' : attempt?.status === 'paid' ? 'processing' : (attempt?.status ?? 'none');
      return {
        status,
        method: attempt?.method ?? null,
        attempt_id: attempt?.attemptId ?? null,
        period_end: attempt?.periodEnd == null ? null : new Date(attempt.periodEnd).toISOString(),
        step: await stepOf(connection),
      };
    },
  );

  app.get(
    '/connect/numbers',
    { config, schema: { tags, summary: "The numbers of the connection's project", response: { 200: Type.Object({ data: Type.Array(NumberOut) }) } } },
    async (request) => {
      const { projectId } = linked(request.connect.connection);
      const rows = await projectInstances(pool, projectId);
      return { data: rows.map((n) => ({ id: n.instance_id, phone: n.phone, status: n.status })) };
    },
  );

  app.post(
    '/connect/numbers',
    {
      config,
      schema: {
        tags,
        summary: 'Add a number to pair (402 payment_required before Pro is paid, 402 quota_exceeded past the plan)',
        body: Type.Object({ nickname: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false, examples: [{ nickname: 'Loja' }] }),
        response: { 201: NumberOut },
      },
    },
    async (request, reply) => {
      const { accountId, projectId } = requirePaid(request.connect.connection);
      const plan = planNamed(ctx.directory.accounts.get(accountId)?.plan);
      if ((await projectInstances(pool, projectId)).length >= plan.numbers) throw gatewayError('quota_exceeded');
      const created = await createInstance(producer, { accountId, projectId, nickname: request.body.nickname ?? null, connector: ctx.clients.config.defaultConnector });
      // The component pairs it next: answer once the routes that read numbers see it.
      await untilProjected(pool, projectId, created.instance_id, WRITE_DEADLINE_MS);
      return reply.code(201).send({ id: created.instance_id, phone: created.phone, status: created.status });
    },
  );

  const numberRequest = async (request: FastifyRequest, instanceId: string, wanted: NumberRequest) => {
    const { projectId } = requirePaid(request.connect.connection);
    const number = await projectInstance(pool, projectId, instanceId);
    if (number === undefined) throw gatewayError('not_found');
    await requestOfNumber(producer, number, wanted);
  };

  app.post(
    '/connect/numbers/:id/connect',
    {
      config,
      schema: {
        tags,
        summary: 'Generate a QR or a pairing code; it arrives on /connect/stream',
        params: NumberParams,
        querystring: Type.Object({ method: Type.Optional(Type.Union([Type.Literal('qr'), Type.Literal('code')])) }),
        response: { 202: Type.Object({ accepted: Type.Literal(true) }) },
      },
    },
    async (request, reply) => {
      const method = request.query.method ?? 'qr';
      await numberRequest(request, request.params.id, { kind: 'pair', method, phone: request.connect.connection.customer.phone });
      return reply.code(202).send({ accepted: true as const });
    },
  );

  app.post(
    '/connect/numbers/:id/disconnect',
    { config, schema: { tags, summary: 'Disconnect a number', params: NumberParams, response: { 202: Type.Object({ accepted: Type.Literal(true) }) } } },
    async (request, reply) => {
      await numberRequest(request, request.params.id, { kind: 'unlink', reason: 'disconnected from the component' });
      return reply.code(202).send({ accepted: true as const });
    },
  );

  app.get(
    '/connect/stream',
    {
      config: { ...config, sessionInQuery: true },
      schema: {
        tags,
        summary: 'Server-sent events of the project: qr_code, pairing_code, instance.status',
        querystring: Type.Object({
          session: Type.Optional(Type.String({ maxLength: 200 })),
          last_event_id: Type.Optional(Type.String({ maxLength: MAX_CURSOR_LENGTH, description: 'The `Last-Event-ID` to resume after (the header wins)' })),
        }),
        response: { 200: { description: '`event:` the type, `data:` the envelope, `id:` a cursor to resume after', content: { 'text/event-stream': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const { accountId, projectId } = linked(request.connect.connection);
      const { session } = request.connect;
      serveStream(options.hub, reply, {
        projectId,
        accountId,
        accepts: (event) => STREAMED.has(event.event_type),
        // EventSource sends it again when it reconnects: nothing shown in between is missed.
        lastEventId: lastEventIdOf(request, request.query.last_event_id),
        heartbeatMs: options.heartbeatMs,
        // The stream ends with its session.
        stillAllowed: () => ctx.clock() < session.expiresAt && ctx.connections.get(session.connectionId)?.to_status !== 'revoked',
      });
    },
  );

  app.post(
    '/connect/complete',
    {
      config,
      schema: {
        tags,
        summary: 'Complete the connection: the one-time code for the partner',
        response: { 200: Type.Object({ code: Type.String({ description: 'cc_…, one use, 10 minutes' }), connection_id: Type.String(), external_id: Type.String(), status: Type.String() }) },
      },
    },
    async (request) => {
      const { partner } = request.connect;
      let { connection } = request.connect;
      const { projectId } = requirePaid(connection);
      if (connection.to_status === 'pending_payment') connection = await ctx.connectionWriter.check(connection.connection_id, 'payment');
      const connected = await connectedNumber(projectId);
      if (connected === undefined && connection.to_status !== 'active') throw gatewayError('number_required');
      const done = await ctx.connectionWriter.complete(connection.connection_id, {
        instanceId: asInstanceId(connected?.instance_id ?? connection.instance_id ?? ''),
        hasConnectedNumber: connected !== undefined,
      });
      const { code } = await issueConnectCode(pool, { connectionId: done.connection_id, partnerId: partner.id }, ctx.clock());
      return { code, connection_id: done.connection_id, external_id: done.external_id, status: done.to_status };
    },
  );
};
