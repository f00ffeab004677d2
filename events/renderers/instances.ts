import { isWebhookEventType } from '../catalogue.js';
import type { InstancePayload, InstanceStatusPayload, PairingCodePayload, QrCodePayload } from '../payloads.js';
import { asEventId, derivedId, type EventId } from '../../schemas/ids.js';
import type { InstanceState, PairingChallenge, PublicEvent } from '../../schemas/records.js';
import { scheduledEvent } from './event.js';

/**
 * A status change of a number (`previous_status` set): `instance.<status>` for the five statuses
 * with a webhook event, under the record's own event_id, and always the stream-only
 * `instance.status`. Records that change nothing else, tombstones and deleted numbers announce
 * nothing (a removed number has no status to announce; the API answered its DELETE).
 */
export function instanceEvents(state: InstanceState): PublicEvent[] {
  const previous = state.previous_status;
  if (previous === null || state.deleted) return [];
  const about = {
    occurred_at: state.occurred_at,
    account_id: state.account_id,
    project_id: state.project_id,
    instance_id: state.instance_id,
  };
  const change: InstanceStatusPayload = {
    instance_id: state.instance_id,
    status: state.status,
    previous_status: previous,
    phone: state.phone,
    reason: state.reason,
  };
  const stream = scheduledEvent({ ...about, event_id: instanceStatusEventId(state.event_id), event_type: 'instance.status', payload: change });
  const eventType = `instance.${state.status}`;
  if (!isWebhookEventType(eventType)) return [stream];
  const payload: InstancePayload = {
    status: state.status,
    previous_status: previous,
    phone: state.phone,
    nickname: state.nickname,
    reason: state.reason,
    health_score: state.health_score,
  };
  return [scheduledEvent({ ...about, event_id: state.event_id, event_type: eventType, payload }), stream];
}

/** Derived from the state record's id, so a re-applied record repeats it. */
export function instanceStatusEventId(stateEventId: string): EventId {
  return asEventId(derivedId('evt', stateEventId, 'instance.status'));
}

/** A QR or pairing code: stream-only `qr_code` / `pairing_code`, under the challenge's own id. */
export function pairingEvent(challenge: PairingChallenge): PublicEvent {
  const expiresAt = new Date(challenge.expires_at).toISOString();
  const payload: QrCodePayload | PairingCodePayload =
    challenge.method === 'qr'
      ? { instance_id: challenge.instance_id, qr_code: challenge.value, expires_at: expiresAt }
      : { instance_id: challenge.instance_id, pairing_code: challenge.value, expires_at: expiresAt };
  return scheduledEvent({
    event_id: challenge.event_id,
    occurred_at: challenge.occurred_at,
    account_id: challenge.account_id,
    project_id: challenge.project_id,
    instance_id: challenge.instance_id,
    event_type: challenge.method === 'qr' ? 'qr_code' : 'pairing_code',
    payload,
  });
}
