import type { CallReceivedPayload } from '../payloads.js';
import type { CallEvent, PublicEvent } from '../../schemas/records.js';
import { scheduledEvent } from './event.js';

/**
 * `call.received` when a call rings on the number (its offer); the caller rides on the envelope's
 * sender, a group call's group on its group. The call's later statuses feed only the call log.
 */
export function callEvents(fact: CallEvent): PublicEvent[] {
  if (fact.status !== 'offer') return [];
  const payload: CallReceivedPayload = {
    call_id: fact.call_id,
    from: fact.caller.jid,
    is_video: fact.is_video,
    offline: fact.offline,
  };
  return [
    scheduledEvent({
      event_id: fact.event_id,
      occurred_at: fact.occurred_at,
      account_id: fact.account_id,
      project_id: fact.project_id,
      instance_id: fact.instance_id,
      event_type: 'call.received',
      sender: fact.caller,
      group: fact.group_jid === null ? null : { jid: fact.group_jid, name: null },
      payload,
    }),
  ];
}
