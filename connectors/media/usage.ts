import { asEventId } from '../../schemas/ids.js';
import type { Media, UsageRecord } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import type { MediaOwner } from './store.js';

/** Writes one usage record to `gw.usage`. */
export type RecordUsage = (record: UsageRecord) => Promise<void>;

/** Usage records go to `gw.usage`, keyed by account. */
export function usageProducer(producer: Pick<Producer, 'send'>): RecordUsage {
  return async (record) => {
    await producer.send(topics.usage, [{ key: record.account_id, value: record }]);
  };
}

/** The `media_stored` record of a stored media; its event id comes from the media id, so a repeat counts once. */
export function mediaStoredUsage(media: Media, owner: MediaOwner, at: number): UsageRecord {
  return {
    event_id: asEventId(`media_stored:${media.id}`),
    occurred_at: at,
    account_id: owner.accountId,
    project_id: owner.projectId,
    instance_id: owner.instanceId,
    kind: 'media_stored',
    quantity: media.size,
    message_id: null,
    media_id: media.id,
    allowance: null,
    percent: null,
    used: null,
    included: null,
    plan: null,
  };
}

/**
 * Counts a stored media against its owner. When the record cannot be written the object is
 * removed again, so an account's storage is never used without being counted.
 */
export async function countStored(
  media: Media,
  owner: MediaOwner | null,
  recordUsage: RecordUsage,
  remove: (storageKey: string) => Promise<void>,
): Promise<Media> {
  if (owner === null) return media;
  try {
    await recordUsage(mediaStoredUsage(media, owner, Date.now()));
    return media;
  } catch (error) {
    await remove(media.storage_key).catch(() => undefined);
    throw error;
  }
}
