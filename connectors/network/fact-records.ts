import type { CallEvent, GroupEvent, InboundMessage, InstanceState, MessageStatus, PairingChallenge } from '../../schemas/records.js';
import type { CallFact, GroupFact, InboundFact, PairingFact, StateFact, StatusFact } from './connector.js';
import type { SendRef } from './executed.js';
import { inboundEventId, inboundMessageId, newEventId, statusEventId } from './ids.js';

/**
 * The next full state of a number after a state fact: everything else is copied from the current
 * state, so the compacted topic keeps the whole record. Undefined when nothing changes.
 */
export function nextState(current: InstanceState, fact: StateFact, now: number): InstanceState | undefined {
  const phone = fact.phone ?? current.phone;
  const health = fact.health_score ?? current.health_score;
  const changed = fact.status !== current.status;
  if (!changed && phone === current.phone && fact.reason === current.reason && health === current.health_score) return undefined;
  return {
    ...current,
    event_id: newEventId(),
    occurred_at: now,
    phone,
    health_score: health,
    status: fact.status,
    previous_status: changed ? current.status : null,
    reason: fact.reason,
  };
}

export function pairingRecord(current: InstanceState, fact: PairingFact, now: number): PairingChallenge {
  return {
    event_id: newEventId(),
    occurred_at: now,
    account_id: current.account_id,
    project_id: current.project_id,
    instance_id: current.instance_id,
    method: fact.method,
    value: fact.value,
    expires_at: fact.expires_at,
  };
}

/** A status of one of our sends; `wa_message_id` is null when the send failed before the network took it. */
export type StatusOutcome = Omit<StatusFact, 'kind' | 'wa_message_id'> & { readonly wa_message_id: string | null };

export function statusRecord(send: SendRef, outcome: StatusOutcome): MessageStatus {
  return {
    event_id: statusEventId(send.message_id, outcome.status),
    occurred_at: outcome.occurred_at,
    account_id: send.account_id,
    project_id: send.project_id,
    instance_id: send.instance_id,
    message_id: send.message_id,
    wa_message_id: outcome.wa_message_id,
    client_reference: send.client_reference,
    campaign_id: send.campaign_id,
    to: send.to,
    status: outcome.status,
    error_code: outcome.error_code,
    error_reason: outcome.error_reason,
  };
}

export function inboundRecord(current: InstanceState, fact: InboundFact): InboundMessage {
  return {
    ...fact,
    event_id: inboundEventId(current.instance_id, fact.wa_message_id),
    account_id: current.account_id,
    project_id: current.project_id,
    instance_id: current.instance_id,
    message_id: inboundMessageId(current.instance_id, fact.wa_message_id),
  };
}

export function groupRecord(current: InstanceState, fact: GroupFact): GroupEvent {
  return {
    ...fact,
    event_id: newEventId(),
    account_id: current.account_id,
    project_id: current.project_id,
    instance_id: current.instance_id,
  };
}

export function callRecord(current: InstanceState, fact: CallFact): CallEvent {
  return {
    ...fact,
    event_id: newEventId(),
    account_id: current.account_id,
    project_id: current.project_id,
    instance_id: current.instance_id,
  };
}
