import type { Directory } from '../../processors/directory.js';
import type { Cipher } from '../../shared/cipher.js';
import type { DeliveryTask } from '../../schemas/records.js';
import { isConnectEventType } from '../../events/catalogue.js';
import type { PartnerConnections } from './targets.js';

/** Where and how a task is posted, read from the current directory at the time of the attempt. */
export type Endpoint =
  | { readonly kind: 'ready'; readonly url: string; readonly secret: string }
  /** The target is gone (deleted, or disabled): the task is dropped. `url`: where it went, when the target is still there. */
  | { readonly kind: 'gone'; readonly reason: string; readonly url?: string }
  /** The target exists but cannot be signed for: the attempt fails for good. */
  | { readonly kind: 'unusable'; readonly url: string; readonly reason: string };

/**
 * The current URL and opened signing secret of a task's target (an account webhook, or a partner's
 * webhook). Secrets are opened once per sealed value and kept in memory only; a rotated secret has
 * a new sealed value and is opened again.
 */
export class Endpoints {
  private readonly opened = new Map<string, { readonly sealed: string; readonly secret: string }>();

  constructor(
    private readonly directory: Directory,
    private readonly cipher: Cipher,
    private readonly connections: Pick<PartnerConnections, 'get'>,
  ) {}

  of(task: DeliveryTask): Endpoint {
    switch (task.target_kind) {
      case 'account_webhook':
        return this.accountWebhook(task);
      case 'partner_webhook':
        return this.partnerWebhook(task);
    }
  }

  /**
   * A partner's webhook (spec 6.4): gone once the partner is deleted, deactivated or without a
   * webhook URL. An operation event is posted only while its connection is still `active` (a
   * retry after a suspension or revocation is dropped); a connect.* event goes whatever the
   * connection became since.
   */
  private partnerWebhook(task: DeliveryTask): Endpoint {
    const partner = this.directory.partners.get(task.target_id);
    if (partner === undefined) return this.forget(`partner:${task.target_id}`, 'partner deleted');
    if (!partner.active) return { kind: 'gone', reason: 'partner inactive', url: partner.webhook_url ?? undefined };
    if (partner.webhook_url === null) return { kind: 'gone', reason: 'partner has no webhook' };
    if (!isConnectEventType(task.event_type)) {
      const connection = this.connections.get(connectionIdOf(task.body_json) ?? '');
      if (connection?.partner_id !== partner.id || connection.to_status !== 'active') return { kind: 'gone', reason: 'connection no longer active', url: partner.webhook_url };
    }
    if (partner.webhook_secret_ciphertext === null) return { kind: 'unusable', url: partner.webhook_url, reason: 'the partner has no webhook secret' };
    return this.opening(`partner:${partner.id}`, partner.webhook_url, partner.webhook_secret_ciphertext);
  }

  private forget(cacheKey: string, reason: string): Endpoint {
    this.opened.delete(cacheKey);
    return { kind: 'gone', reason };
  }

  /** The URL with its secret opened, once per sealed value. */
  private opening(cacheKey: string, url: string, sealed: string): Endpoint {
    const cached = this.opened.get(cacheKey);
    if (cached?.sealed === sealed) return { kind: 'ready', url, secret: cached.secret };
    let secret: string;
    try {
      secret = this.cipher.open(sealed);
    } catch {
      return { kind: 'unusable', url, reason: 'the signing secret cannot be opened with this SECRETS_KEY' };
    }
    this.opened.set(cacheKey, { sealed, secret });
    return { kind: 'ready', url, secret };
  }

  private accountWebhook(task: DeliveryTask): Endpoint {
    const webhook = this.directory.webhooks.get(task.target_id);
    if (webhook === undefined) return this.forget(task.target_id, 'webhook deleted');
    if (!webhook.enabled && !askedByHand(task)) return { kind: 'gone', reason: 'webhook disabled', url: webhook.url };
    return this.opening(webhook.id, webhook.url, webhook.secret_ciphertext);
  }
}

/** The connection id of a partner body (its `connection` block); undefined when it has none. */
function connectionIdOf(bodyJson: string): string | undefined {
  try {
    const { connection } = JSON.parse(bodyJson) as { connection?: { id?: unknown } };
    return typeof connection?.id === 'string' ? connection.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A disabled webhook gets nothing automatic (events, retries), only the one attempt someone asked
 * for: a test event, or the first attempt of a redelivery by hand.
 */
function askedByHand(task: DeliveryTask): boolean {
  return task.trigger === 'test' || (task.trigger === 'manual' && task.attempt === 1);
}
