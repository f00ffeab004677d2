import { randomUUID } from 'node:crypto';
import { asAccountId, asEventId } from '../../schemas/ids.js';
import { DeadlineExceeded, withDeadline } from '../../shared/deadline.js';
import { topics, type OutgoingRecord, type Producer } from '../../topics/index.js';
import type { AudienceRecord } from '../../schemas/records.js';
import { WRITE_DEADLINE_MS } from '../config/write.js';

type Entity = AudienceRecord['entity'];

/** An entry of `gw.audience` (its full state), or its removal when `entity` is null. */
export function audienceRecord(accountId: string, entityId: string, entity: Entity | null, at: number): OutgoingRecord<AudienceRecord> {
  if (entity === null) return { key: entityId, value: null };
  return {
    key: entityId,
    value: { event_id: asEventId(randomUUID()), occurred_at: at, account_id: asAccountId(accountId), project_id: null, instance_id: null, entity_id: entityId, entity },
  };
}

/** Interval of the read that waits for the projection to show a write. */
const POLL_MS = 25;

/**
 * Writes the records, then waits until the audience projection shows them (`applied`), so that
 * the caller's next read, and the next send to a phone just listed, sees the change. Past the
 * deadline: 503 `service_unavailable`, and the write may still take effect.
 */
export async function writeAudience(producer: Producer, records: readonly OutgoingRecord<AudienceRecord>[], applied: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WRITE_DEADLINE_MS;
  for (let i = 0; i < records.length; i += 1000) await withDeadline(producer.send(topics.audience, records.slice(i, i + 1000)), deadline - Date.now());
  while (!(await applied())) {
    if (Date.now() > deadline) throw new DeadlineExceeded(WRITE_DEADLINE_MS);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
