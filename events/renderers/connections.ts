import type { ConnectEventType } from '../catalogue.js';
import type { ConnectionTransition, PublicEvent } from '../../schemas/records.js';
import { scheduledEvent } from './event.js';

/**
 * The connect.* lifecycle event a transition announces (spec 6.4), under the transition's own
 * `evt_` id, with the connection block; none for transitions that announce nothing (opening,
 * linking, paying, data updates). connect.revoked keeps the account and project the connection
 * had, so it reaches the partner like the others; its block says `revoked`.
 */
export function connectionEvents(transition: ConnectionTransition): PublicEvent[] {
  const eventType = announcedType(transition);
  if (eventType === undefined || transition.account_id === null) return [];
  const payload = transition.to_status === 'revoked' ? { status: 'revoked', revoked_by: transition.revoked_by } : { status: transition.to_status };
  return [
    {
      ...scheduledEvent({
        event_id: transition.event_id,
        occurred_at: transition.occurred_at,
        account_id: transition.account_id,
        project_id: transition.project_id,
        instance_id: null,
        event_type: eventType,
        scope: 'connection',
        payload,
      }),
      connection: {
        id: transition.connection_id,
        external_id: transition.external_id,
        account_id: transition.to_status === 'revoked' ? null : transition.account_id,
        project_id: transition.to_status === 'revoked' ? null : transition.project_id,
        status: transition.to_status,
      },
    },
  ];
}

function announcedType({ from_status: from, to_status: to }: ConnectionTransition): ConnectEventType | undefined {
  if (to === 'revoked' && from !== 'revoked') return 'connect.revoked';
  if (from === 'pending_number' && to === 'active') return 'connect.completed';
  if (from === 'active' && to === 'suspended') return 'connect.suspended';
  if (from === 'suspended' && to === 'active') return 'connect.resumed';
  return undefined;
}
