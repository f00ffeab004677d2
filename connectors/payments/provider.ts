import type { AccountId } from '../../schemas/ids.js';
import type { PaymentMethod, PaymentStatus } from '../../schemas/records.js';
import type { Currency } from '../../shared/currency.js';
import type { MailLocale } from '../email/templates.js';

/** Monthly price of Pro in each currency, in minor units (our choice; docs/connect.md). */
export const PRO_PRICES: Readonly<Record<Currency, number>> = { BRL: 14_900, USD: 2_900, EUR: 2_900 };

/** Spec 4.5: Pix exists only in BRL. */
export function methodsFor(currency: Currency): PaymentMethod[] {
  return currency === 'BRL' ? ['card', 'pix'] : ['card'];
}

export type ProviderName = 'sandbox' | 'stripe';

/** `processing`: the customer confirmed and the processor has not answered yet (spec 4.5 rule 4). */
export type AttemptStatus = PaymentStatus | 'processing';

/** One checkout of Pro, as the provider's table keeps it; renewals update the same attempt. */
export interface Attempt {
  readonly attemptId: string;
  readonly accountId: AccountId;
  readonly connectionId: string | null;
  readonly method: PaymentMethod;
  readonly status: AttemptStatus;
  readonly currency: Currency;
  readonly amount: number;
  readonly periodEnd: number | null;
  /** Who pays, for renewal e-mails. */
  readonly email: string | null;
  readonly locale: MailLocale;
}

export interface CheckoutInput {
  readonly accountId: AccountId;
  readonly connectionId: string;
  readonly method: PaymentMethod;
  readonly currency: Currency;
  readonly email: string;
  readonly name: string;
  readonly locale: MailLocale;
}

export interface Checkout {
  readonly client_secret: string;
  readonly attempt_id: string;
  readonly method: PaymentMethod;
  readonly status: 'pending';
}

/**
 * What a confirmation from the processor did to an attempt. Its effect on the account (paid makes
 * it Pro, a lapse Free, a renewal due e-mails its link) is the payments processor's, applied from
 * the record `recordId` on `gw.payments`; null when the confirmation wrote no record.
 */
export interface PaymentOutcome {
  readonly kind: 'paid' | 'failed' | 'processing' | 'canceled' | 'lapsed' | 'renewal_due';
  readonly attempt: Attempt;
  readonly recordId: string | null;
}

/** The component's payment step, whoever takes the money (the sandbox, Stripe). */
export interface PaymentProvider {
  readonly name: ProviderName;
  /** What the component mounts the processor's form with; null for the sandbox. */
  readonly publishableKey: string | null;
  /** Methods offered in a currency: card, and Pix in BRL when the processor has it enabled. */
  methods(currency: Currency): Promise<PaymentMethod[]>;
  /**
   * Opens a checkout of Pro by `input.method`, canceling an earlier open attempt. Refuses with
   * `method_unavailable`, `payment_pending` (an attempt is being confirmed) or `payment_unavailable`.
   */
  checkout(input: CheckoutInput, now: number): Promise<Checkout>;
  /** The account's latest attempt. */
  latest(accountId: AccountId): Promise<Attempt | undefined>;
}

export type PaymentRefusal = 'method_unavailable' | 'payment_pending' | 'payment_unavailable';

/** A checkout the provider refused, with the spec's code (spec 7); the API maps it to its status. */
export class PaymentRefused extends Error {
  constructor(
    readonly code: PaymentRefusal,
    detail?: string,
  ) {
    super(detail === undefined ? `payment refused: ${code}` : `payment refused: ${code} (${detail})`);
    this.name = 'PaymentRefused';
  }
}
