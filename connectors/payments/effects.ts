import type { PaymentRecord } from '../../schemas/records.js';
import { asEventId, newId, type AccountId } from '../../schemas/ids.js';
import type { Clock } from '../../shared/clock.js';
import { endOffsets, topicName, topics, type Kafka, type Producer } from '../../topics/index.js';
import type { Directory } from '../../processors/directory.js';
import type { ConnectionsView } from '../../processors/connections/view.js';
import type { ConnectionWriter } from '../../processors/connections/writer.js';
import { includesConnect } from '../../processors/usage/plans.js';
import { writeConfig } from '../../processors/config/write.js';
import { isMailLocale, renewalMail } from '../email/templates.js';
import type { Mailer } from '../email/smtp.js';

/** How long catching up with a topic may take before the record is tried again. */
const STEP_DEADLINE_MS = 15_000;

export interface PaymentEffectsDeps {
  readonly kafka: Kafka;
  readonly producer: Producer;
  readonly prefix: string;
  readonly directory: Directory;
  readonly connections: ConnectionsView;
  readonly writer: ConnectionWriter;
  readonly mailer: Pick<Mailer, 'send'>;
  readonly clock: Clock;
}

/**
 * What a payment record does to its account (spec 4.5 rules 5 and 2): paid makes it Pro, a lapse
 * makes it Free, and its connections are held against the new plan (resumed, moved on to the
 * number step, or suspended); a renewal due e-mails its pay link. Each step reads the latest
 * state first and writes only what differs, so applying a record twice changes nothing the second
 * time but the e-mail, which the caller sends once per record id.
 */
export class PaymentEffects {
  constructor(private readonly deps: PaymentEffectsDeps) {}

  async apply(record: PaymentRecord): Promise<void> {
    const accountId = record.account_id;
    switch (record.status) {
      case 'paid':
        await this.setPlan(accountId, 'pro');
        return this.holdConnections(accountId);
      case 'lapsed':
        await this.setPlan(accountId, 'free');
        return this.holdConnections(accountId);
      case 'pending':
        if (record.pay_url === null || record.email === null) return;
        await this.deps.mailer.send({
          to: record.email,
          ...renewalMail(isMailLocale(record.locale) ? record.locale : 'en', record.pay_url, { amount: record.amount, currency: record.currency }),
        });
        return;
      default:
        return;
    }
  }

  private async setPlan(accountId: AccountId, plan: 'pro' | 'free'): Promise<void> {
    const { directory, producer, kafka, prefix } = this.deps;
    // The account may have been created, or its plan moved by an operator, just before: read gw.config to its end.
    await directory.reached(await endOffsets(kafka, topicName(topics.config, prefix)), STEP_DEADLINE_MS);
    const account = directory.accounts.get(accountId);
    if (account === undefined) return;
    // A lapse takes away the paid plan only: an account an operator moved elsewhere keeps its plan.
    if (plan === 'pro' ? includesConnect(account.plan) : account.plan !== 'pro') return;
    const { id, ...rest } = account;
    // Resolves once this process's directory holds the new plan, which the connections are then held against.
    await writeConfig({ producer, directory }, id, {
      event_id: asEventId(newId('cfg')),
      occurred_at: this.deps.clock(),
      account_id: id,
      project_id: null,
      instance_id: null,
      entity_id: id,
      entity: { kind: 'account', ...rest, plan },
    });
  }

  private async holdConnections(accountId: AccountId): Promise<void> {
    const { connections, kafka, prefix, writer } = this.deps;
    await connections.reached(await endOffsets(kafka, topicName(topics.connections, prefix)), STEP_DEADLINE_MS);
    for (const connection of connections.ofAccount(accountId).filter((c) => c.to_status !== 'revoked')) {
      await writer.check(connection.connection_id, 'payment');
    }
  }
}
