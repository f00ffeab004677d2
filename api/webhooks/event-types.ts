import { isStreamOnly, isWebhookEventType, webhookEventTypes, type WebhookEventType } from '../../events/catalogue.js';
import { gatewayError } from '../errors.js';

/**
 * The `event_types` of a webhook as given: every name must be a webhook event of spec 6.1 or a
 * stream-only one (`qr_code`, `pairing_code`, `instance.status`), which is accepted and kept but
 * never delivered (spec 6.1 rule 2: "subscribing a webhook to them has no effect"). Repeats are
 * dropped, the first place kept. Anything else: 400 naming it.
 */
export function eventTypesOf(names: readonly string[]): string[] {
  const unknown = names.find((name) => !isWebhookEventType(name) && !isStreamOnly(name));
  if (unknown !== undefined) throw gatewayError('invalid_request', { detail: `unknown event type "${unknown}"` });
  return [...new Set(names)];
}

/** The webhook events a list listens to: all of them when it is empty; stream-only names count for nothing. */
export function listenedEvents(eventTypes: readonly string[]): WebhookEventType[] {
  return eventTypes.length === 0 ? [...webhookEventTypes] : webhookEventTypes.filter((type) => eventTypes.includes(type));
}

/**
 * The first event (catalogue order) that both lists listen to, or undefined (spec 6.2: within a
 * project each event has at most one webhook; an empty list takes them all).
 */
export function sharedEvent(a: readonly string[], b: readonly string[]): WebhookEventType | undefined {
  const theirs = new Set(listenedEvents(b));
  return listenedEvents(a).find((type) => theirs.has(type));
}
