import { renewalMail } from '../../connectors/email/templates.js';
import type { Mailer } from '../../connectors/email/smtp.js';
import type { PaymentOutcome } from '../../connectors/payments/provider.js';
import { includesConnect } from '../../processors/usage/plans.js';
import { asEventId, newId, type AccountId } from '../../schemas/ids.js';
import { writeConfig } from '../config-writes.js';
import type { ApiContext } from '../context.js';

/**
 * What a payment outcome does to the account (spec 4.5 rules 5 and 2): paid makes it Pro, a lapse
 * makes it Free, and its connections are held against the new plan at once (resumed, moved on to
 * the number step, or suspended); a Pix renewal sends its link by e-mail. Run after the outcome's
 * record is on the log; each effect is idempotent, so a redelivered confirmation repeats nothing.
 */
export async function applyPaymentOutcome(ctx: ApiContext, mailer: Pick<Mailer, 'send'>, outcome: PaymentOutcome): Promise<void> {
  const { attempt } = outcome;
  switch (outcome.kind) {
    case 'paid':
      await setPlan(ctx, attempt.accountId, 'pro');
      return holdConnections(ctx, attempt.accountId);
    case 'lapsed':
      await setPlan(ctx, attempt.accountId, 'free');
      return holdConnections(ctx, attempt.accountId);
    case 'renewal_due':
      if (attempt.email !== null) await mailer.send({ to: attempt.email, ...renewalMail(attempt.locale, outcome.payUrl, attempt) });
      return;
    default:
      return;
  }
}

async function setPlan(ctx: ApiContext, accountId: AccountId, plan: 'pro' | 'free'): Promise<void> {
  const account = ctx.directory.accounts.get(accountId);
  if (account === undefined) return;
  // A lapse takes away the paid plan only: an account an operator moved elsewhere keeps its plan.
  if (plan === 'pro' ? includesConnect(account.plan) : account.plan !== 'pro') return;
  const { id, ...rest } = account;
  await writeConfig(ctx, id, {
    event_id: asEventId(newId('cfg')),
    occurred_at: ctx.clock(),
    account_id: id,
    project_id: null,
    instance_id: null,
    entity_id: id,
    entity: { kind: 'account', ...rest, plan },
  });
}

async function holdConnections(ctx: ApiContext, accountId: AccountId): Promise<void> {
  for (const connection of ctx.connections.ofAccount(accountId).filter((c) => c.to_status !== 'revoked')) {
    await ctx.connectionWriter.check(connection.connection_id, 'payment');
  }
}
