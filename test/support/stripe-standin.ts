import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { request } from 'undici';

type Json = Record<string, unknown>;

interface Invoice {
  id: string;
  subscription: string;
  status: 'draft' | 'open' | 'paid';
  billing_reason: 'subscription_create' | 'subscription_cycle';
  clientSecret: string;
  period: { start: number; end: number };
}

interface Subscription {
  id: string;
  customer: string;
  method: 'card' | 'pix';
  currency: string;
  amount: number;
  status: 'incomplete' | 'active' | 'past_due' | 'unpaid' | 'canceled';
  latest: string;
  metadata: Json;
}

export interface StandinCall {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
}

const MONTH_S = 30 * 86_400;
const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

/**
 * A local stand-in of the Stripe API, for the `stripe` package pointed at it: the few endpoints the
 * provider calls (customers, subscriptions, invoice finalization, payment method configurations),
 * in Stripe's shapes and error format, and the events Stripe would post back, signed with the
 * package's own test-header helper. What the customer does at Stripe (pay, a renewal, a lapse) is
 * driven by the test through its methods.
 */
export class StripeStandin {
  readonly calls: StandinCall[] = [];
  /** Whether the account has Pix available (spec 4.5 rule 2). */
  pixAvailable = true;
  /** The next call to a path answers this Stripe error instead. */
  private readonly failures = new Map<string, { status: number; type: string; message: string }>();
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly invoices = new Map<string, Invoice>();
  private readonly server: Server;
  private readonly stripe = new Stripe('sk_test_standin');
  /** Where events go: set once the API listens. */
  webhookUrl = '';

  constructor(readonly webhookSecret: string) {
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        ({ status, body }) => res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') }).end(JSON.stringify(body)),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  failNext(path: string, status = 402, type = 'card_error', message = 'Your card was declined.'): void {
    this.failures.set(path, { status, type, message });
  }

  callsTo(method: string, path: RegExp): StandinCall[] {
    return this.calls.filter((c) => c.method === method && path.test(c.path));
  }

  subscriptionOf(clientSecret: string): Subscription {
    const invoice = [...this.invoices.values()].find((i) => i.clientSecret === clientSecret);
    if (invoice === undefined) throw new Error(`no invoice has ${clientSecret}`);
    return this.subscriptions.get(invoice.subscription)!;
  }

  statusOf(subscriptionId: string): Subscription['status'] | undefined {
    return this.subscriptions.get(subscriptionId)?.status;
  }

  // What the customer does at Stripe, and the events it gives.

  /** The customer confirmed and the bank has not answered yet. */
  processing(clientSecret: string): Promise<number> {
    return this.send('payment_intent.processing', this.intent(clientSecret, 'processing'));
  }

  declined(clientSecret: string): Promise<number> {
    return this.send('payment_intent.payment_failed', { ...this.intent(clientSecret, 'requires_payment_method'), last_payment_error: { message: 'Your card was declined.' } });
  }

  /** The invoice of `clientSecret` is paid: invoice.paid, as Stripe posts it. */
  async pay(clientSecret: string): Promise<number> {
    const invoice = [...this.invoices.values()].find((i) => i.clientSecret === clientSecret)!;
    invoice.status = 'paid';
    const subscription = this.subscriptions.get(invoice.subscription)!;
    subscription.status = 'active';
    await this.send('payment_intent.succeeded', this.intent(clientSecret, 'succeeded'));
    return this.send('invoice.paid', this.invoiceObject(invoice));
  }

  /**
   * A new period begins: a card is charged (invoice.paid); a Pix invoice is finalized and sent
   * (invoice.finalized, carrying its hosted page) and waits to be paid.
   */
  async renew(subscriptionId: string): Promise<{ status: number; clientSecret: string }> {
    const subscription = this.subscriptions.get(subscriptionId)!;
    const previous = this.invoices.get(subscription.latest)!;
    const invoice = this.newInvoice(subscription, 'subscription_cycle', { start: previous.period.end, end: previous.period.end + MONTH_S });
    invoice.status = 'open';
    if (subscription.method === 'card') {
      invoice.status = 'paid';
      return { status: await this.send('invoice.paid', this.invoiceObject(invoice)), clientSecret: invoice.clientSecret };
    }
    return { status: await this.send('invoice.finalized', this.invoiceObject(invoice)), clientSecret: invoice.clientSecret };
  }

  /** Retries ran out (`unpaid`) or the subscription was canceled at Stripe. */
  end(subscriptionId: string, status: 'unpaid' | 'canceled'): Promise<number> {
    const subscription = this.subscriptions.get(subscriptionId)!;
    subscription.status = status;
    return this.send(status === 'canceled' ? 'customer.subscription.deleted' : 'customer.subscription.updated', this.subscriptionObject(subscription));
  }

  /** Posts an event signed as Stripe signs it; the answer's status. */
  async send(type: string, object: Json, options: { eventId?: string; signWith?: string } = {}): Promise<number> {
    const payload = JSON.stringify({
      id: options.eventId ?? id('evt'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object },
    });
    const signature = this.stripe.webhooks.generateTestHeaderString({ payload, secret: options.signWith ?? this.webhookSecret });
    const response = await request(this.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
    await response.body.dump();
    return response.statusCode;
  }

  // The API.

  private async handle(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const url = new URL(req.url ?? '/', 'http://standin');
    let text = '';
    for await (const chunk of req) text += (chunk as Buffer).toString('utf8');
    const params = Object.fromEntries(new URLSearchParams(req.method === 'GET' || req.method === 'DELETE' ? url.search : text));
    this.calls.push({ method: req.method ?? 'GET', path: url.pathname, params });
    if (!req.headers.authorization?.startsWith('Bearer sk_test_')) return error(401, 'invalid_request_error', 'Invalid API Key provided.');
    const failure = this.failures.get(url.pathname);
    if (failure !== undefined) {
      this.failures.delete(url.pathname);
      return error(failure.status, failure.type, failure.message);
    }
    const route = `${req.method} ${url.pathname}`;
    let match: RegExpExecArray | null;
    if (route === 'POST /v1/customers') return { status: 200, body: { id: id('cus'), object: 'customer', email: params.email ?? null, name: params.name ?? null } };
    if (route === 'POST /v1/subscriptions') return { status: 200, body: this.createSubscription(params) };
    if (route === 'GET /v1/payment_method_configurations') {
      const configuration = { id: id('pmc'), object: 'payment_method_configuration', active: true, card: { available: true }, pix: { available: this.pixAvailable } };
      return { status: 200, body: { object: 'list', data: [configuration], has_more: false, url: '/v1/payment_method_configurations' } };
    }
    if ((match = /^POST \/v1\/invoices\/([^/]+)\/finalize$/.exec(route))) {
      const invoice = this.invoices.get(match[1]!);
      if (invoice === undefined) return error(404, 'invalid_request_error', 'No such invoice', 'resource_missing');
      invoice.status = 'open';
      return { status: 200, body: this.invoiceObject(invoice) };
    }
    if ((match = /^DELETE \/v1\/subscriptions\/([^/]+)$/.exec(route))) {
      const subscription = this.subscriptions.get(match[1]!);
      if (subscription === undefined) return error(404, 'invalid_request_error', 'No such subscription', 'resource_missing');
      subscription.status = 'canceled';
      return { status: 200, body: this.subscriptionObject(subscription) };
    }
    return error(404, 'invalid_request_error', `Unrecognized request URL (${route})`);
  }

  private createSubscription(params: Record<string, string>): Json {
    const sendInvoice = params.collection_method === 'send_invoice';
    const subscription: Subscription = {
      id: id('sub'),
      customer: params.customer!,
      method: params['payment_settings[payment_method_types][0]'] === 'pix' ? 'pix' : 'card',
      currency: params['items[0][price_data][currency]']!,
      amount: Number(params['items[0][price_data][unit_amount]']),
      status: sendInvoice ? 'active' : 'incomplete',
      latest: '',
      metadata: { account_id: params['metadata[account_id]'] },
    };
    this.subscriptions.set(subscription.id, subscription);
    const now = Math.floor(Date.now() / 1000);
    const invoice = this.newInvoice(subscription, 'subscription_create', { start: now, end: now + MONTH_S });
    // Charged automatically: open at once; sent for payment: a draft until finalized.
    invoice.status = sendInvoice ? 'draft' : 'open';
    const expanded = params['expand[0]'] === 'latest_invoice.confirmation_secret';
    return { ...this.subscriptionObject(subscription), latest_invoice: expanded ? this.invoiceObject(invoice) : invoice.id };
  }

  private newInvoice(subscription: Subscription, reason: Invoice['billing_reason'], period: Invoice['period']): Invoice {
    const intent = id('pi');
    const invoice: Invoice = { id: id('in'), subscription: subscription.id, status: 'draft', billing_reason: reason, clientSecret: `${intent}_secret_${randomBytes(12).toString('hex')}`, period };
    this.invoices.set(invoice.id, invoice);
    subscription.latest = invoice.id;
    return invoice;
  }

  private invoiceObject(invoice: Invoice): Json {
    return {
      id: invoice.id,
      object: 'invoice',
      status: invoice.status,
      billing_reason: invoice.billing_reason,
      hosted_invoice_url: invoice.status === 'draft' ? null : `https://invoice.stripe.test/i/${invoice.id}`,
      confirmation_secret: invoice.status === 'draft' ? null : { client_secret: invoice.clientSecret, type: 'payment_intent' },
      parent: { type: 'subscription_details', subscription_details: { subscription: invoice.subscription, metadata: {} }, quote_details: null },
      lines: { object: 'list', data: [{ id: id('il'), object: 'line_item', period: invoice.period }], has_more: false },
    };
  }

  private subscriptionObject(subscription: Subscription): Json {
    return {
      id: subscription.id,
      object: 'subscription',
      customer: subscription.customer,
      status: subscription.status,
      collection_method: subscription.method === 'pix' ? 'send_invoice' : 'charge_automatically',
      latest_invoice: subscription.latest,
      metadata: subscription.metadata,
    };
  }

  private intent(clientSecret: string, status: string): Json {
    return { id: clientSecret.split('_secret_')[0], object: 'payment_intent', client_secret: clientSecret, status, last_payment_error: null };
  }
}

function error(status: number, type: string, message: string, code?: string): { status: number; body: unknown } {
  return { status, body: { error: { type, message, ...(code === undefined ? {} : { code }) } } };
}
