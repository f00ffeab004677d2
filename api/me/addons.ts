import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AddonsEntry } from '../../processors/directory.js';
import { changeAddons } from '../../processors/config/account-settings.js';
import { addonNames, addons, mediaAllowance, planTakes, type AddonName } from '../../processors/usage/addons.js';
import { planNamed } from '../../processors/usage/plans.js';
import type { AccountId } from '../../schemas/ids.js';
import { currencyFor } from '../../shared/currency.js';
import { configLockDeps, configWriter } from '../config-writes.js';
import type { RouteOptions } from '../context.js';
import { gatewayError } from '../errors.js';

// One literal per add-on of the catalogue (processors/usage/addons.ts).
const AddonNameSchema = Type.Union([Type.Literal('media_storage') satisfies { const: AddonName }], {
  description: '`media_storage`: 1 GB more of stored media each (spec 8.3)',
});

export const AddonOut = Type.Object({
  addon: AddonNameSchema,
  name: Type.String(),
  description: Type.String(),
  quantity: Type.Integer({ description: 'How many the account holds' }),
  max: Type.Integer({ description: 'The most an account may hold' }),
  available: Type.Boolean({ description: 'Whether the plan takes it (Free takes no add-ons)' }),
  unit_price: Type.Object({
    currency: Type.String({ description: 'BRL, USD or EUR, from the account country (spec 4.4 rule 2)' }),
    amount: Type.Integer({ description: 'Monthly price of one, in minor units' }),
  }),
});

const AddonsOut = Type.Object({
  data: Type.Array(AddonOut, { description: 'The catalogue, with what the account holds of each' }),
  media_storage_allowance_bytes: Type.Integer({ description: "Stored media the account may hold: the plan's plus its add-ons'" }),
});

/**
 * The add-ons of spec 8.3 (`GET/POST /me/addons`, `DELETE /me/addons/{addon}`): priced extras
 * on top of the plan, held as one `account_addons` record per account on `gw.config` and
 * enforced where the allowance is checked (api/media/allowance.ts). Only account admins (owner
 * and admin keys) change them; changes of one account run alone, so two adds count two.
 */
export const addonRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const { directory } = ctx;
  const config = { partnerKeys: false };

  const listed = (accountId: string) => {
    const account = directory.accounts.get(accountId);
    if (account === undefined) throw gatewayError('unauthorized');
    const held = directory.addonsOf(accountId);
    const currency = currencyFor(account.country);
    return {
      data: addonNames.map((name) => ({
        addon: name,
        name: addons[name].name,
        description: addons[name].description,
        quantity: held[name],
        max: addons[name].max,
        available: planTakes(planNamed(account.plan), name),
        unit_price: { currency, amount: addons[name].monthlyPrice[currency] },
      })),
      media_storage_allowance_bytes: mediaAllowance(account.plan, held),
    };
  };

  /** Writes the account's add-ons as `change` makes them, alone among its add-on changes. */
  const change = (accountId: AccountId, next: (held: AddonsEntry, plan: string) => AddonsEntry) =>
    changeAddons({ ...configWriter(ctx), ...configLockDeps(ctx) }, accountId, next, ctx.clock());

  app.get(
    '/me/addons',
    { config, schema: { tags: ['account'], summary: 'The add-ons catalogue and what the account holds', response: { 200: AddonsOut } } },
    async (request) => listed(request.auth.accountId),
  );

  app.post(
    '/me/addons',
    {
      config,
      schema: {
        tags: ['account'],
        summary: 'Add add-ons (account admins); 402 payment_required on a plan that takes none',
        body: Type.Object(
          { addon: AddonNameSchema, quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'How many to add; default 1' })) },
          { additionalProperties: false, examples: [{ addon: 'media_storage', quantity: 1 }] },
        ),
        response: { 201: AddonsOut },
      },
    },
    async (request, reply) => {
      if (request.auth.role === 'agent') throw gatewayError('forbidden');
      const { addon, quantity = 1 } = request.body;
      await change(request.auth.accountId, (held, plan) => {
        if (!planTakes(planNamed(plan), addon)) throw gatewayError('payment_required');
        const total = held[addon] + quantity;
        if (total > addons[addon].max) throw gatewayError('invalid_request', { detail: `at most ${addons[addon].max} ${addon} add-ons` });
        return { ...held, [addon]: total };
      });
      return reply.code(201).send(listed(request.auth.accountId));
    },
  );

  app.delete(
    '/me/addons/:addon',
    {
      config,
      schema: {
        tags: ['account'],
        summary: 'Remove one add-on (account admins); 404 when none is held',
        params: Type.Object({ addon: Type.String({ maxLength: 100 }) }),
        response: { 200: AddonsOut },
      },
    },
    async (request) => {
      if (request.auth.role === 'agent') throw gatewayError('forbidden');
      const addon = request.params.addon;
      if (!(addonNames as string[]).includes(addon)) throw gatewayError('not_found');
      const name = addon as AddonName;
      await change(request.auth.accountId, (held) => {
        if (held[name] === 0) throw gatewayError('not_found');
        return { ...held, [name]: held[name] - 1 };
      });
      return listed(request.auth.accountId);
    },
  );
};
