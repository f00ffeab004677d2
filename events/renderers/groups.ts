import type { GroupPayload } from '../payloads.js';
import type { GroupEvent, PublicEvent } from '../../schemas/records.js';
import { scheduledEvent } from './event.js';

/** `group.<kind>`: the group rides on the envelope; the payload says who changed what. */
export function groupEvent(fact: GroupEvent): PublicEvent {
  return scheduledEvent({
    event_id: fact.event_id,
    occurred_at: fact.occurred_at,
    account_id: fact.account_id,
    project_id: fact.project_id,
    instance_id: fact.instance_id,
    event_type: `group.${fact.kind}`,
    group: fact.group,
    payload: groupPayload(fact),
  });
}

function groupPayload(fact: GroupEvent): GroupPayload {
  switch (fact.kind) {
    case 'joined':
    case 'left':
      return { author: fact.author };
    case 'participant_added':
    case 'participant_removed':
    case 'participant_promoted':
    case 'participant_demoted':
      // The phone of a participant is not shown, like the envelope's sender for account webhooks.
      return { author: fact.author, participants: fact.participants.map(({ jid, lid, name }) => ({ jid, lid, name })) };
    case 'subject_changed':
      return { author: fact.author, subject: fact.subject };
    case 'description_changed':
      return { author: fact.author, description: fact.description };
  }
}
