import type { Directory } from '../../processors/directory.js';
import type { Cipher } from '../../shared/cipher.js';
import type { DeliveryTask } from '../../schemas/records.js';

/** Where and how a task is posted, read from the current directory at the time of the attempt. */
export type Endpoint =
  | { readonly kind: 'ready'; readonly url: string; readonly secret: string }
  /** The target is gone (deleted, or disabled): the task is dropped. */
  | { readonly kind: 'gone'; readonly reason: string }
  /** The target exists but cannot be signed for: the attempt fails for good. */
  | { readonly kind: 'unusable'; readonly url: string; readonly reason: string };

/**
 * The current URL and opened signing secret of a task's target. Secrets are opened once per sealed
 * value and kept in memory only; a rotated secret has a new sealed value and is opened again.
 */
export class Endpoints {
  private readonly opened = new Map<string, { readonly sealed: string; readonly secret: string }>();

  constructor(
    private readonly directory: Directory,
    private readonly cipher: Cipher,
  ) {}

  of(task: DeliveryTask): Endpoint {
    switch (task.target_kind) {
      case 'account_webhook':
        return this.accountWebhook(task);
      case 'partner_webhook':
        return { kind: 'gone', reason: 'partner webhooks are not delivered by this version' };
    }
  }

  private accountWebhook(task: DeliveryTask): Endpoint {
    const webhook = this.directory.webhooks.get(task.target_id);
    if (webhook === undefined) {
      this.opened.delete(task.target_id);
      return { kind: 'gone', reason: 'webhook deleted' };
    }
    if (!webhook.enabled && !askedByHand(task)) return { kind: 'gone', reason: 'webhook disabled' };
    const cached = this.opened.get(webhook.id);
    if (cached?.sealed === webhook.secret_ciphertext) return { kind: 'ready', url: webhook.url, secret: cached.secret };
    let secret: string;
    try {
      secret = this.cipher.open(webhook.secret_ciphertext);
    } catch {
      return { kind: 'unusable', url: webhook.url, reason: 'the signing secret cannot be opened with this SECRETS_KEY' };
    }
    this.opened.set(webhook.id, { sealed: webhook.secret_ciphertext, secret });
    return { kind: 'ready', url: webhook.url, secret };
  }
}

/**
 * A disabled webhook gets nothing automatic (events, retries), only the one attempt someone asked
 * for: a test event, or the first attempt of a redelivery by hand.
 */
function askedByHand(task: DeliveryTask): boolean {
  return task.trigger === 'test' || (task.trigger === 'manual' && task.attempt === 1);
}
