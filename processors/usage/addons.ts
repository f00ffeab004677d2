import type { Currency } from '../../shared/currency.js';
import type { AddonsEntry } from '../directory.js';
import { planNamed, type Plan } from './plans.js';

/** What an add-on is, for `GET /me/addons`. */
export interface Addon {
  readonly name: string;
  readonly description: string;
  /** Monthly price of one, in minor units of each currency (our choice; docs/spec-choices.md). */
  readonly monthlyPrice: Readonly<Record<Currency, number>>;
  /** The most an account may hold. */
  readonly max: number;
}

/**
 * The add-ons, priced extras on top of a plan (spec 8.3 names the stored-media one). Free takes
 * none: a plan whose `mediaStoragePerAddonBytes` is 0 has nothing for it to add.
 *
 * | add-on | adds | monthly price | at most |
 * | --- | --- | --- | --- |
 * | `media_storage` | the plan's stored media per add-on (1 GB) | BRL 19.90, USD 4.00, EUR 4.00 | 100 |
 */
export const addons = {
  media_storage: {
    name: 'Extra media storage',
    description: 'Adds 1 GB to the stored media allowance',
    monthlyPrice: { BRL: 1_990, USD: 400, EUR: 400 },
    max: 100,
  },
} as const satisfies Record<string, Addon>;

export type AddonName = keyof typeof addons;

export const addonNames = Object.keys(addons) as AddonName[];

/** Whether the plan takes the add-on at all. */
export function planTakes(plan: Plan, addon: AddonName): boolean {
  switch (addon) {
    case 'media_storage':
      return plan.mediaStoragePerAddonBytes > 0;
  }
}

/** The stored media an account may hold: its plan's, plus what its add-ons add (spec 8.3). */
export function mediaAllowance(planName: string, held: AddonsEntry): number {
  const plan = planNamed(planName);
  return plan.mediaStorageBytes + plan.mediaStoragePerAddonBytes * held.media_storage;
}
