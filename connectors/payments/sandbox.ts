import type { Pool } from 'pg';
import type { AccountId } from '../../schemas/ids.js';
import type { PaymentMethod } from '../../schemas/records.js';
import type { Currency } from '../../shared/currency.js';
import { newId } from '../../schemas/ids.js';
import { secretToken } from '../../shared/secret-token.js';
import type { Producer } from '../../topics/index.js';
import { PaymentAttempts } from './attempts.js';
import { methodsFor, PaymentRefused, type Attempt, type Checkout, type CheckoutInput, type PaymentOutcome, type PaymentProvider } from './provider.js';
import { TestClocks } from './test-clocks.js';

const DAY_MS = 24 * 3_600_000;
/** A paid period of the sandbox: it ends on the account's test clock, never on its own. */
const PERIOD_MS = 30 * DAY_MS;
/** As Stripe's test clocks, a clock moves at most two periods at a time. */
export const MAX_ADVANCE_DAYS = 60;

/**
 * What the saved payment method does when a renewal charges it: paid (a card such as Stripe's
 * 4242 4242 4242 4242) or failed (4000 0000 0000 0341, saved but never charged). A failed renewal
 * lapses at once: the sandbox has no retries, it stands for Stripe once its retries ran out.
 */
export type RenewalOutcome = 'paid' | 'failed';

/** The account's subscription after a renewal or a move of its test clock. */
export interface SandboxSubscription {
  readonly attempt: Attempt;
  /** The account's time on its test clock. */
  readonly clock: number;
  /** What each renewal did, in order: paid, or lapsed. */
  readonly renewals: readonly PaymentOutcome[];
}

/**
 * The sandbox payment provider (the default, in development mode): a stand-in for the processor
 * that keeps its attempts as a processor keeps them on its servers, confirms them when the
 * component's sandbox form posts the client secret (`POST /sandbox/payments/confirm`), and renews
 * or lapses a paid subscription when told to, as a processor's test mode does (`renew`, `advance`).
 */
export class SandboxPayments implements PaymentProvider {
  readonly name = 'sandbox' as const;
  readonly publishableKey = null;
  private readonly attempts: PaymentAttempts;
  private readonly clocks: TestClocks;

  constructor(pool: Pool, producer: Producer) {
    this.attempts = new PaymentAttempts(pool, producer, 'sandbox');
    this.clocks = new TestClocks(pool);
  }

  async methods(currency: Currency): Promise<PaymentMethod[]> {
    return methodsFor(currency);
  }

  async checkout(input: CheckoutInput, now: number): Promise<Checkout> {
    if (!methodsFor(input.currency).includes(input.method)) throw new PaymentRefused('method_unavailable');
    await this.attempts.cancelOpen(input.accountId, now, async () => undefined);
    const clientSecret = secretToken(`sandbox_${newId('pi')}_secret_`, 24);
    const attempt = await this.attempts.open({ input, clientSecret, providerRef: null, customerRef: null }, now);
    return { client_secret: clientSecret, attempt_id: attempt.attemptId, method: attempt.method, status: 'pending' };
  }

  async latest(accountId: AccountId): Promise<Attempt | undefined> {
    return (await this.attempts.of(accountId))[0];
  }

  /**
   * What the processor answers when the customer confirms: paid, failed, or processing (being
   * confirmed). Only an open attempt moves; undefined for a secret no attempt has.
   */
  async confirm(clientSecret: string, outcome: 'paid' | 'failed' | 'processing', now: number): Promise<PaymentOutcome | undefined> {
    const attempt = await this.attempts.bySecret(clientSecret);
    if (attempt === undefined) return undefined;
    if (attempt.status !== 'pending' && attempt.status !== 'processing') return { kind: settledKind(attempt), attempt, recordId: null };
    if (outcome === 'processing') return { kind: 'processing', attempt: await this.attempts.markProcessing(attempt, now), recordId: null };
    if (outcome === 'failed') return { kind: 'failed', ...(await this.attempts.settle(attempt, { status: 'failed', reason: 'refused by the sandbox' }, now)) };
    const periodEnd = (await this.clocks.timeOf(attempt.accountId, now)) + PERIOD_MS;
    return { kind: 'paid', ...(await this.attempts.settle(attempt, { status: 'paid', periodEnd }, now)) };
  }

  /**
   * The renewal of the account's paid subscription, now rather than at its period end: paid moves
   * the period on by 30 days, failed lapses it. Undefined when the account has no paid subscription.
   */
  async renew(accountId: AccountId, outcome: RenewalOutcome, now: number): Promise<SandboxSubscription | undefined> {
    const subscription = await this.paidSubscription(accountId);
    if (subscription === undefined) return undefined;
    const renewal = await this.renewal(subscription, outcome, now);
    return { attempt: renewal.attempt, clock: await this.clocks.timeOf(accountId, now), renewals: [renewal] };
  }

  /**
   * Moves the account's test clock forward by `days` (at most MAX_ADVANCE_DAYS): each period end
   * the clock passes is a renewal that does `outcome`, until one lapses. Undefined when the account
   * has no paid subscription.
   */
  async advance(accountId: AccountId, days: number, outcome: RenewalOutcome, now: number): Promise<SandboxSubscription | undefined> {
    let subscription = await this.paidSubscription(accountId);
    if (subscription === undefined) return undefined;
    const clock = await this.clocks.advance(accountId, days * DAY_MS, now);
    const renewals: PaymentOutcome[] = [];
    while (subscription.status === 'paid' && (subscription.periodEnd ?? 0) <= clock) {
      const renewal = await this.renewal(subscription, outcome, now);
      renewals.push(renewal);
      subscription = renewal.attempt;
    }
    return { attempt: subscription, clock, renewals };
  }

  private async paidSubscription(accountId: AccountId): Promise<Attempt | undefined> {
    return (await this.attempts.of(accountId)).find((attempt) => attempt.status === 'paid');
  }

  /** One renewal, a record on `gw.payments` as Stripe's invoice.paid or lapse gives one. */
  private async renewal(subscription: Attempt, outcome: RenewalOutcome, now: number): Promise<PaymentOutcome> {
    if (outcome === 'failed') {
      return { kind: 'lapsed', ...(await this.attempts.settle(subscription, { status: 'lapsed', reason: 'renewal refused by the sandbox' }, now)) };
    }
    const periodEnd = (subscription.periodEnd ?? now) + PERIOD_MS;
    return { kind: 'paid', ...(await this.attempts.settle(subscription, { status: 'paid', periodEnd, reason: 'renewal charged by the sandbox' }, now)) };
  }
}

function settledKind(attempt: Attempt): 'paid' | 'failed' | 'canceled' | 'lapsed' {
  return attempt.status === 'pending' || attempt.status === 'processing' ? 'canceled' : attempt.status;
}

