import { asEventId, newId, type AccountId } from '../../schemas/ids.js';
import type { AccountAddons, BillingDetails, Brand, OfficialRequest, Widgets } from '../../schemas/records.js';
import { addonsId, billingId, brandId, officialId, widgetsId, type AddonsEntry } from '../directory.js';
import { changeConfigAlone, type ConfigLockDeps } from './lock.js';
import { ConfigRefused } from './refused.js';
import { writeConfig, type ConfigWriter } from './write.js';

/** What an account holds one of, keyed by the account: its brand, official-sender request, widgets, billing details and add-ons. */
export type AccountSetting = Brand | OfficialRequest | Widgets | BillingDetails | AccountAddons;

const keyOf: Record<AccountSetting['kind'], (accountId: string) => string> = {
  brand: brandId,
  official_request: officialId,
  widgets: widgetsId,
  billing_details: billingId,
  account_addons: addonsId,
};

/** Replaces one of the account's settings; resolves once this process's directory holds it. */
export async function writeAccountSetting(writer: ConfigWriter, accountId: AccountId, entity: AccountSetting, at: number): Promise<void> {
  const id = keyOf[entity.kind](accountId);
  await writeConfig(writer, id, { event_id: asEventId(newId('cfg')), occurred_at: at, account_id: accountId, project_id: null, instance_id: null, entity_id: id, entity });
}

/**
 * Writes the account's add-ons as `next` makes them of those it holds and its plan, alone among
 * its add-on changes, so `next` sees the latest; `unauthorized` once the account is gone.
 */
export function changeAddons(
  deps: ConfigLockDeps & ConfigWriter,
  accountId: AccountId,
  next: (held: AddonsEntry, plan: string) => AddonsEntry,
  at: number,
): Promise<void> {
  return changeConfigAlone(deps, { kind: 'addons', id: accountId }, async () => {
    const account = deps.directory.accounts.get(accountId);
    if (account === undefined) throw new ConfigRefused('unauthorized');
    await writeAccountSetting(deps, accountId, { kind: 'account_addons', ...next(deps.directory.addonsOf(accountId), account.plan) }, at);
  });
}
