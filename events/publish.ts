import type { PublicEvent } from '../schemas/records.js';
import { topics, type Producer, type RecordHeaders } from '../topics/index.js';

/** The key of `gw.events`: the project, or the account for account events (they have no project). */
export function eventKey(event: PublicEvent): string {
  return event.project_id ?? event.account_id;
}

/** Writes public events to `gw.events` with one send, each under its key; `traces`: of each event, when it is traced. */
export async function publishEvents(producer: Producer, events: readonly PublicEvent[], traces: readonly (RecordHeaders | undefined)[] = []): Promise<void> {
  if (events.length === 0) return;
  await producer.send(topics.events, events.map((event, i) => ({ key: eventKey(event), value: event, headers: traces[i] })));
}
