import type { PublicEvent } from '../../schemas/records.js';

/** What a renderer decides; everything else of a scheduled event is empty. */
export type EventFields = Pick<PublicEvent, 'event_id' | 'occurred_at' | 'account_id' | 'project_id' | 'instance_id' | 'event_type'> &
  Partial<Pick<PublicEvent, 'scope' | 'client_reference' | 'group' | 'sender' | 'mentions'>> & { readonly payload: object };

/** A real (scheduled) public event; the payload is stored as the JSON the envelope will carry. */
export function scheduledEvent({ payload, ...fields }: EventFields): PublicEvent {
  return {
    scope: 'project',
    client_reference: null,
    group: null,
    sender: null,
    mentions: [],
    connection: null,
    trigger: 'scheduled',
    webhook_id: null,
    ...fields,
    payload_json: JSON.stringify(payload),
  };
}
