import { hash } from 'node:crypto';
import { envelopeBody } from '../../events/envelope.js';
import type { DeliveryTargetKind, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import type { Target } from './targets.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * The id of one event's delivery to one target, derived from both: an event read again after a
 * crash keeps its delivery id, so the attempts before and after the crash stay one delivery.
 */
export function deliveryIdOf(eventId: string, targetKind: DeliveryTargetKind, targetId: string): string {
  const digest = hash('sha256', `${eventId}\n${targetKind}\n${targetId}`, 'buffer');
  let id = '';
  for (let i = 0; i < 16; i++) id += BASE32[digest[i]! & 31];
  return `dlv_${id}`;
}

/**
 * The first attempt of an event to each of its targets, due now. The body is rendered once per
 * audience (and, for partners, per connection block); it is the exact string that is signed,
 * posted, and kept for every later attempt. A partner's delivery id is derived from the event, the
 * partner and the connection, so one partner gets an event once for each of its connections.
 */
export function firstTasks(event: PublicEvent, targets: readonly Target[], now: number): DeliveryTask[] {
  const bodies = new Map<string, string>();
  const bodyFor = (target: Target) => {
    const connection = target.connection;
    const cacheKey = connection === undefined ? target.audience : `${target.audience}\n${JSON.stringify(connection)}`;
    let body = bodies.get(cacheKey);
    if (body === undefined) {
      body = envelopeBody(connection === undefined ? event : { ...event, connection }, target.audience);
      bodies.set(cacheKey, body);
    }
    return body;
  };
  return targets.map((target) => ({
    event_id: event.event_id,
    occurred_at: now,
    account_id: event.account_id,
    project_id: event.project_id,
    instance_id: event.instance_id,
    delivery_id: deliveryIdOf(event.event_id, target.kind, target.connection === undefined ? target.id : `${target.id}/${target.connection.id}`),
    target_kind: target.kind,
    target_id: target.id,
    event_type: event.event_type,
    trigger: event.trigger,
    attempt: 1,
    not_before: now,
    last_error: null,
    body_json: bodyFor(target),
  }));
}
