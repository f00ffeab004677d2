import type { Pool } from 'pg';
import type { AccountId } from '../../schemas/ids.js';
import type { PaymentMethod } from '../../schemas/records.js';
import type { Currency } from '../../shared/currency.js';
import { newId } from '../../schemas/ids.js';
import { secretToken } from '../../shared/secret-token.js';
import type { Producer } from '../../topics/index.js';
import { PaymentAttempts } from './attempts.js';
import { methodsFor, PaymentRefused, type Attempt, type Checkout, type CheckoutInput, type PaymentOutcome, type PaymentProvider } from './provider.js';

/** A paid period of the sandbox; it never lapses on its own. */
const PERIOD_MS = 30 * 24 * 3_600_000;

/**
 * The sandbox payment provider (the default): a stand-in for the processor that keeps its
 * attempts as a processor keeps them on its servers, and confirms them when the component's
 * sandbox form posts the client secret (`POST /sandbox/payments/confirm`).
 */
export class SandboxPayments implements PaymentProvider {
  readonly name = 'sandbox' as const;
  readonly publishableKey = null;
  private readonly attempts: PaymentAttempts;

  constructor(pool: Pool, producer: Producer) {
    this.attempts = new PaymentAttempts(pool, producer, 'sandbox');
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
    if (attempt.status !== 'pending' && attempt.status !== 'processing') return { kind: settledKind(attempt), attempt };
    if (outcome === 'processing') return { kind: 'processing', attempt: await this.attempts.markProcessing(attempt, now) };
    if (outcome === 'failed') return { kind: 'failed', attempt: await this.attempts.settle(attempt, { status: 'failed', reason: 'refused by the sandbox' }, now) };
    return { kind: 'paid', attempt: await this.attempts.settle(attempt, { status: 'paid', periodEnd: now + PERIOD_MS }, now) };
  }
}

function settledKind(attempt: Attempt): 'paid' | 'failed' | 'canceled' | 'lapsed' {
  return attempt.status === 'pending' || attempt.status === 'processing' ? 'canceled' : attempt.status;
}

