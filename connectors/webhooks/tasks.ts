import { createHash } from 'node:crypto';
import { envelopeBody, type Audience } from '../../events/envelope.js';
import type { DeliveryTargetKind, DeliveryTask, PublicEvent } from '../../schemas/records.js';
import type { Target } from './targets.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * The id of one event's delivery to one target, derived from both: an event read again after a
 * crash keeps its delivery id, so the attempts before and after the crash stay one delivery.
 */
export function deliveryIdOf(eventId: string, targetKind: DeliveryTargetKind, targetId: string): string {
  const digest = createHash('sha256').update(`${eventId}\n${targetKind}\n${targetId}`).digest();
  let id = '';
  for (const byte of digest.subarray(0, 16)) id += BASE32[byte & 31];
  return `dlv_${id}`;
}

/**
 * The first attempt of an event to each of its targets, due now. The body is rendered once per
 * audience; it is the exact string that is signed, posted, and kept for every later attempt.
 */
export function firstTasks(event: PublicEvent, targets: readonly Target[], now: number): DeliveryTask[] {
  const bodies = new Map<Audience, string>();
  const bodyFor = (audience: Audience) => {
    let body = bodies.get(audience);
    if (body === undefined) {
      body = envelopeBody(event, audience);
      bodies.set(audience, body);
    }
    return body;
  };
  return targets.map((target) => ({
    event_id: event.event_id,
    occurred_at: now,
    account_id: event.account_id,
    project_id: event.project_id,
    instance_id: event.instance_id,
    delivery_id: deliveryIdOf(event.event_id, target.kind, target.id),
    target_kind: target.kind,
    target_id: target.id,
    event_type: event.event_type,
    trigger: event.trigger,
    attempt: 1,
    not_before: now,
    last_error: null,
    body_json: bodyFor(target.audience),
  }));
}
