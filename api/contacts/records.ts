import { randomUUID } from 'node:crypto';
import { asAccountId, asEventId } from '../../schemas/ids.js';
import type { ContactEvent, ContactEventKind } from '../../schemas/records.js';
import type { OutgoingRecord } from '../../topics/index.js';
import type { ContactValues } from './import.js';

/** A change of the account's contact base for `gw.contacts` (keyed by account). None of these is a public event. */
export function contactRecord(
  accountId: string,
  kind: ContactEventKind,
  contact: ContactValues,
  source: 'api' | 'import',
  at: number,
): OutgoingRecord<ContactEvent> {
  return {
    key: accountId,
    value: {
      event_id: asEventId(randomUUID()),
      occurred_at: at,
      account_id: asAccountId(accountId),
      project_id: null,
      instance_id: null,
      kind,
      contact_id: contact.id,
      phone: contact.phone,
      name: contact.name,
      tags: contact.tags,
      source,
    },
  };
}
