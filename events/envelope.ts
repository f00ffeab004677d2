import type { PublicEvent } from '../schemas/records.js';

/** Who reads a body: partners also see `sender.phone` and the connection block (spec 2.4, 2.5). */
export type Audience = 'account' | 'partner';

/** The public JSON envelope of spec 2.5. Absent values are left out, never sent as null. */
export interface Envelope {
  readonly event_id: string;
  readonly event_type: string;
  readonly timestamp: string;
  readonly instance_id?: string;
  readonly client_reference?: string;
  readonly group?: { readonly jid: string; readonly name: string | null };
  readonly sender?: { readonly jid: string; readonly lid: string | null; readonly name: string | null; readonly phone?: string | null };
  readonly mentions?: readonly string[];
  readonly payload: unknown;
  readonly connection?: {
    readonly id: string;
    readonly external_id: string;
    readonly account_id: string | null;
    readonly project_id: string | null;
    readonly status: string;
  };
}

export function envelopeOf(event: PublicEvent, audience: Audience = 'account'): Envelope {
  const sender = event.sender;
  return {
    event_id: event.event_id,
    event_type: event.event_type,
    timestamp: new Date(event.occurred_at).toISOString(),
    ...(event.instance_id !== null && { instance_id: event.instance_id }),
    ...(event.client_reference !== null && { client_reference: event.client_reference }),
    ...(event.group !== null && { group: { jid: event.group.jid, name: event.group.name } }),
    ...(sender !== null && {
      sender: { jid: sender.jid, lid: sender.lid, name: sender.name, ...(audience === 'partner' && { phone: sender.phone }) },
    }),
    ...(event.mentions.length > 0 && { mentions: event.mentions }),
    payload: JSON.parse(event.payload_json) as unknown,
    ...(audience === 'partner' && event.connection !== null && { connection: { ...event.connection } }),
  };
}

/** The exact bytes posted and streamed: signatures are computed over this string. */
export function envelopeBody(event: PublicEvent, audience: Audience = 'account'): string {
  return JSON.stringify(envelopeOf(event, audience));
}
