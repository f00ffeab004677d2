import type { Directory, PartnerEntry, WebhookEntry } from '../../processors/directory.js';
import type { ConnectionEntry } from '../../processors/connections/view.js';
import type { Audience } from '../../events/envelope.js';
import { isConnectEventType, isPartnerOperationEventType, isStreamOnly, isWebhookEventType, listensTo } from '../../events/catalogue.js';
import type { ConnectionRef, DeliveryTargetKind, PublicEvent } from '../../schemas/records.js';

/** Where one event goes. Each kind has its resolver below and the audience its body is rendered for. */
export interface Target {
  readonly kind: DeliveryTargetKind;
  /** Webhook id or partner id (the record key of tasks and attempts, and the key of the endpoint limiter). */
  readonly id: string;
  readonly audience: Audience;
  /**
   * Partner targets: the connection block of the body. One partner gets an event once per
   * connection (two customers of one partner on one project: two deliveries).
   */
  readonly connection?: ConnectionRef;
}

/** The connections the dispatcher follows: the partner of a connection, the connections of a project. */
export interface PartnerConnections {
  get(id: string): ConnectionEntry | undefined;
  onProject(projectId: string): ConnectionEntry[];
}

interface Sources {
  readonly directory: Directory;
  readonly connections: PartnerConnections;
}

type Resolver = (event: PublicEvent, sources: Sources) => Target[];

const accountWebhook = (webhook: WebhookEntry): Target => ({ kind: 'account_webhook', id: webhook.id, audience: 'account' });

/**
 * Account and project webhooks (spec 6.1): a test event goes to its one webhook only, enabled or
 * not (the user asked for it); an account-scope event to every enabled webhook of the account that
 * listens to it; any other event to the enabled webhooks of its project that listen to it.
 * Connection events (connect.*) never reach them.
 */
const accountWebhooks: Resolver = (event, { directory }) => {
  if (event.scope === 'connection' || !isWebhookEventType(event.event_type)) return [];
  if (event.trigger === 'test') {
    const webhook = event.webhook_id === null ? undefined : directory.webhooks.get(event.webhook_id);
    return webhook !== undefined && webhook.account_id === event.account_id ? [accountWebhook(webhook)] : [];
  }
  const candidates =
    event.scope === 'account'
      ? directory.webhooksOfAccount(event.account_id)
      : event.project_id === null
        ? []
        : directory.webhooksOf(event.project_id);
  return candidates.filter((w) => w.enabled && listensTo(w.event_types, event.event_type)).map(accountWebhook);
};

/** The block a partner reads for a connection as it is now (operation events). */
export function connectionRefOf(connection: ConnectionEntry): ConnectionRef {
  return {
    id: connection.connection_id,
    external_id: connection.external_id,
    account_id: connection.account_id,
    project_id: connection.project_id,
    status: connection.to_status,
  };
}

/** A partner that can be posted to: active, with a webhook URL and secret. */
export function reachablePartner(partner: PartnerEntry | undefined): partner is PartnerEntry & { webhook_url: string; webhook_secret_ciphertext: string } {
  return partner !== undefined && partner.active && partner.webhook_url !== null && partner.webhook_secret_ciphertext !== null;
}

/**
 * Partner webhooks (spec 6.4). Only real events (trigger `scheduled`): manual and test events are
 * the account's own. A connect.* event goes to the partner owning its connection block, with that
 * block as it was at the transition; an operation event of a project goes once to the partner of
 * each `active` connection on the project, with the connection's current block. Partners that are
 * inactive or have no webhook get nothing.
 */
const partnerWebhooks: Resolver = (event, { directory, connections }) => {
  if (event.trigger !== 'scheduled') return [];
  const partnerTarget = (partnerId: string, connection: ConnectionRef): Target[] =>
    reachablePartner(directory.partners.get(partnerId)) ? [{ kind: 'partner_webhook', id: partnerId, audience: 'partner', connection }] : [];
  if (isConnectEventType(event.event_type)) {
    if (event.connection === null) return [];
    const owner = connections.get(event.connection.id);
    return owner === undefined ? [] : partnerTarget(owner.partner_id, event.connection);
  }
  if (event.scope !== 'project' || event.project_id === null || !isPartnerOperationEventType(event.event_type)) return [];
  return connections
    .onProject(event.project_id)
    .filter((c) => c.to_status === 'active')
    .flatMap((c) => partnerTarget(c.partner_id, connectionRefOf(c)));
};

const resolvers: readonly Resolver[] = [accountWebhooks, partnerWebhooks];

/** Every target of an event; none for stream-only events and names outside the catalogues. */
export function targetsOf(event: PublicEvent, directory: Directory, connections: PartnerConnections): Target[] {
  if (isStreamOnly(event.event_type)) return [];
  return resolvers.flatMap((resolve) => resolve(event, { directory, connections }));
}
