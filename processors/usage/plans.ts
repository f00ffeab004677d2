/** What a plan includes. Sizes are decimal (spec 8.3 writes MB and GB, and MiB where it means binary). */
export interface Plan {
  readonly name: string;
  /** Numbers (instances) the account may have. */
  readonly numbers: number;
  /** Sends included per calendar month (UTC); an OTP counts one. */
  readonly messagesPerMonth: number;
  /** Stored media included, in bytes. */
  readonly mediaStorageBytes: number;
  /** Stored media each add-on adds, in bytes; 0 where the plan takes no add-ons. */
  readonly mediaStoragePerAddonBytes: number;
  /** Token bucket of each API key: `rate` requests a second, at most `burst` at once (spec 8.1). */
  readonly rateLimit: { readonly rate: number; readonly burst: number };
}

const MB = 1_000_000;
const GB = 1_000 * MB;

/**
 * The plans:
 *
 * | plan | numbers | messages a month | stored media | rate limit per key |
 * | --- | --- | --- | --- | --- |
 * | `free` | 1 | 1,000 | 100 MB | 20 requests/s, burst 40 |
 * | `pro` | 10 | 100,000 | 1 GB, plus 1 GB per add-on | 50 requests/s, burst 100 |
 * | `scale` | 100 | 10,000,000 | 10 GB, plus 1 GB per add-on | 1,000 requests/s, burst 2,000 |
 *
 * Stored media (spec 8.3) and the default rate limit (spec 8.1) come from the spec; the numbers
 * and messages are our choice. Usage thresholds (`usage.threshold`) fire at 80, 90 and 100 percent
 * of the messages of the month and of the stored media.
 */
export const plans = {
  free: {
    name: 'free',
    numbers: 1,
    messagesPerMonth: 1_000,
    mediaStorageBytes: 100 * MB,
    mediaStoragePerAddonBytes: 0,
    rateLimit: { rate: 20, burst: 40 },
  },
  pro: {
    name: 'pro',
    numbers: 10,
    messagesPerMonth: 100_000,
    mediaStorageBytes: GB,
    mediaStoragePerAddonBytes: GB,
    rateLimit: { rate: 50, burst: 100 },
  },
  scale: {
    name: 'scale',
    numbers: 100,
    messagesPerMonth: 10_000_000,
    mediaStorageBytes: 10 * GB,
    mediaStoragePerAddonBytes: GB,
    rateLimit: { rate: 1_000, burst: 2_000 },
  },
} as const satisfies Record<string, Plan>;

export type PlanName = keyof typeof plans;

export const defaultPlanName: PlanName = 'free';

export function isPlanName(name: string): name is PlanName {
  return Object.hasOwn(plans, name);
}

/** The plan called `name`; a missing or unknown name gets Free, so a typo never grants more. */
export function planNamed(name: string | null | undefined): Plan {
  return plans[name != null && isPlanName(name) ? name : defaultPlanName];
}

/** Whether a plan pays for the partner channel (spec 4.5: Pro only; a larger plan includes it). */
export function includesConnect(plan: string): boolean {
  return plan === 'pro' || plan === 'scale';
}
