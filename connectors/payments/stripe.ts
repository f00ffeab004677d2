import type { Pool } from 'pg';
import Stripe from 'stripe';
import type { AccountId } from '../../schemas/ids.js';
import type { PaymentMethod } from '../../schemas/records.js';
import type { Currency } from '../../shared/currency.js';
import type { Producer } from '../../topics/index.js';
import { PaymentAttempts } from './attempts.js';
import { methodsFor, PaymentRefused, PRO_PRICES, type Attempt, type Checkout, type CheckoutInput, type PaymentOutcome, type PaymentProvider } from './provider.js';

export interface StripeOptions {
  readonly secretKey: string;
  readonly publishableKey: string;
  /** Signs the events Stripe posts to `/payments/stripe/webhook` (`whsec_…`). */
  readonly webhookSecret: string;
  /** The Stripe product the Pro prices belong to (`prod_…`); amounts come from PRO_PRICES. */
  readonly productId: string;
  /** Another API base than Stripe's (a local stand-in in tests). */
  readonly apiUrl?: string;
}

/** Days a Pix invoice stays payable (the first one and each renewal). */
const PIX_DAYS_UNTIL_DUE = 3;
/** How long the answer to "is Pix enabled at the processor?" is trusted. */
const METHODS_TTL_MS = 5 * 60_000;
/** Subscription statuses that end a paid period: the plan falls back to Free. */
const ENDED = new Set<Stripe.Subscription.Status>(['canceled', 'unpaid', 'incomplete_expired', 'paused']);

/**
 * The Stripe provider: Pro is a monthly subscription. By card, the first invoice is charged when
 * the component confirms it with Stripe.js and renewals charge the saved card; by Pix (BRL only),
 * each invoice is sent for payment and a renewal arrives as a link by e-mail. Card data stays
 * between the customer's browser and Stripe: this code sees ids and client secrets only. Facts
 * come back as signed webhook events, verified with the package's own check.
 */
export class StripePayments implements PaymentProvider {
  readonly name = 'stripe' as const;
  readonly publishableKey: string;
  private readonly stripe: Stripe;
  private readonly attempts: PaymentAttempts;
  private pixEnabled: { at: number; enabled: boolean } | undefined;

  constructor(
    pool: Pool,
    producer: Producer,
    private readonly options: StripeOptions,
  ) {
    this.publishableKey = options.publishableKey;
    this.stripe = new Stripe(options.secretKey, { maxNetworkRetries: 2, timeout: 10_000, ...addressOf(options.apiUrl) });
    this.attempts = new PaymentAttempts(pool, producer, 'stripe');
  }

  async methods(currency: Currency): Promise<PaymentMethod[]> {
    const offered = methodsFor(currency);
    return offered.includes('pix') && !(await this.pixAvailable()) ? offered.filter((m) => m !== 'pix') : offered;
  }

  async checkout(input: CheckoutInput, now: number): Promise<Checkout> {
    if (!(await this.methods(input.currency)).includes(input.method)) throw new PaymentRefused('method_unavailable');
    await this.attempts.cancelOpen(input.accountId, now, (previous) => this.cancelAtStripe(previous));
    const opened = await atStripe(async () => {
      const customer = (await this.attempts.customerRefOf(input.accountId)) ?? (await this.createCustomer(input));
      const subscription = await this.stripe.subscriptions.create({
        customer,
        items: [
          {
            price_data: {
              currency: input.currency.toLowerCase(),
              product: this.options.productId,
              unit_amount: PRO_PRICES[input.currency],
              recurring: { interval: 'month' },
            },
          },
        ],
        metadata: { account_id: input.accountId, connection_id: input.connectionId },
        expand: ['latest_invoice.confirmation_secret'],
        ...(input.method === 'card'
          ? { payment_behavior: 'default_incomplete', payment_settings: { payment_method_types: ['card'], save_default_payment_method: 'on_subscription' } }
          : { collection_method: 'send_invoice', days_until_due: PIX_DAYS_UNTIL_DUE, payment_settings: { payment_method_types: ['pix'] } }),
      });
      let invoice = subscription.latest_invoice;
      if (invoice === null || typeof invoice === 'string') throw new PaymentRefused('payment_unavailable', 'the subscription has no invoice');
      // An invoice sent for payment (Pix) starts as a draft; finalizing it creates the payment to confirm.
      if (invoice.status === 'draft') invoice = await this.stripe.invoices.finalizeInvoice(invoice.id, { expand: ['confirmation_secret'] });
      const clientSecret = invoice.confirmation_secret?.client_secret;
      if (clientSecret === undefined) throw new PaymentRefused('payment_unavailable', 'the invoice has no payment to confirm');
      return { customer, subscription: subscription.id, clientSecret };
    });
    const attempt = await this.attempts.open({ input, clientSecret: opened.clientSecret, providerRef: opened.subscription, customerRef: opened.customer }, now);
    return { client_secret: opened.clientSecret, attempt_id: attempt.attemptId, method: attempt.method, status: 'pending' };
  }

  async latest(accountId: AccountId): Promise<Attempt | undefined> {
    return (await this.attempts.of(accountId))[0];
  }

  /** The event in a webhook body, or undefined when its `Stripe-Signature` does not verify. */
  verify(rawBody: Buffer, signature: string | undefined): Stripe.Event | undefined {
    if (signature === undefined) return undefined;
    try {
      return this.stripe.webhooks.constructEvent(rawBody, signature, this.options.webhookSecret);
    } catch {
      return undefined;
    }
  }

  /**
   * Turns a verified event into a fact about one of our attempts, on the log and in its row.
   * Events about other objects, or already applied (Stripe delivers at least once), give undefined.
   */
  async apply(event: Stripe.Event, now: number): Promise<PaymentOutcome | undefined> {
    switch (event.type) {
      case 'payment_intent.processing': {
        const attempt = await this.open(event.data.object.client_secret);
        return attempt && { kind: 'processing', attempt: await this.attempts.markProcessing(attempt, now), recordId: null };
      }
      case 'payment_intent.payment_failed': {
        const intent = event.data.object;
        const attempt = await this.open(intent.client_secret);
        const reason = intent.last_payment_error?.message ?? 'refused by the processor';
        return attempt && { kind: 'failed', ...(await this.attempts.settle(attempt, { status: 'failed', reason, eventId: event.id }, now)) };
      }
      case 'invoice.paid': {
        const invoice = event.data.object;
        const attempt = await this.ofInvoice(invoice);
        const periodEnd = (invoice.lines.data[0]?.period.end ?? 0) * 1000;
        if (attempt === undefined || (attempt.status === 'paid' && (attempt.periodEnd ?? 0) >= periodEnd)) return undefined;
        return { kind: 'paid', ...(await this.attempts.settle(attempt, { status: 'paid', periodEnd, eventId: event.id }, now)) };
      }
      case 'invoice.finalized': {
        const invoice = event.data.object;
        const attempt = await this.ofInvoice(invoice);
        if (attempt?.method !== 'pix' || invoice.billing_reason !== 'subscription_cycle' || !invoice.hosted_invoice_url) return undefined;
        return { kind: 'renewal_due', attempt, recordId: await this.attempts.renewalDue(attempt, invoice.hosted_invoice_url, now, event.id) };
      }
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted': {
        const subscription = event.data.object;
        if (!ENDED.has(subscription.status)) return undefined;
        const attempt = await this.attempts.byRef(subscription.id);
        if (attempt?.status === 'paid') {
          return { kind: 'lapsed', ...(await this.attempts.settle(attempt, { status: 'lapsed', reason: `subscription ${subscription.status}`, eventId: event.id }, now)) };
        }
        if (attempt?.status === 'pending' || attempt?.status === 'processing') {
          return { kind: 'canceled', ...(await this.attempts.settle(attempt, { status: 'canceled', reason: `subscription ${subscription.status}`, eventId: event.id }, now)) };
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private async open(clientSecret: string | null): Promise<Attempt | undefined> {
    const attempt = clientSecret === null ? undefined : await this.attempts.bySecret(clientSecret);
    return attempt?.status === 'pending' || attempt?.status === 'processing' ? attempt : undefined;
  }

  private async ofInvoice(invoice: Stripe.Invoice): Promise<Attempt | undefined> {
    const subscription = invoice.parent?.subscription_details?.subscription;
    if (subscription === undefined || subscription === null) return undefined;
    return this.attempts.byRef(typeof subscription === 'string' ? subscription : subscription.id);
  }

  private async createCustomer(input: CheckoutInput): Promise<string> {
    const customer = await this.stripe.customers.create(
      { email: input.email, name: input.name, preferred_locales: [input.locale], metadata: { account_id: input.accountId } },
      { idempotencyKey: `customer-${input.accountId}` },
    );
    return customer.id;
  }

  private async cancelAtStripe(attempt: Attempt): Promise<void> {
    const subscription = await this.attempts.refOf(attempt.attemptId);
    if (subscription === undefined) return;
    await atStripe(async () => {
      try {
        await this.stripe.subscriptions.cancel(subscription);
      } catch (error) {
        // Already gone at Stripe (expired, or canceled there): nothing left to cancel.
        if (!(error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing')) throw error;
      }
    });
  }

  /** Whether an active payment method configuration has Pix available (spec 4.5 rule 2). */
  private async pixAvailable(): Promise<boolean> {
    const now = Date.now();
    if (this.pixEnabled !== undefined && now - this.pixEnabled.at < METHODS_TTL_MS) return this.pixEnabled.enabled;
    try {
      const configurations = await this.stripe.paymentMethodConfigurations.list({ limit: 20 });
      const enabled = configurations.data.some((c) => c.active && c.pix?.available === true);
      this.pixEnabled = { at: now, enabled };
      return enabled;
    } catch {
      // Unknown for now: offer card only, and ask again on the next checkout.
      return false;
    }
  }
}

/** Runs calls to Stripe: an error of Stripe's becomes 502 `payment_unavailable`. */
async function atStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError) throw new PaymentRefused('payment_unavailable', `${error.type}: ${error.message}`);
    throw error;
  }
}

function addressOf(apiUrl: string | undefined): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (apiUrl === undefined) return {};
  const url = new URL(apiUrl);
  return { host: url.hostname, port: url.port || (url.protocol === 'https:' ? 443 : 80), protocol: url.protocol === 'http:' ? 'http' : 'https' };
}
