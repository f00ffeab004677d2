import type { DeliveryTask } from '../../schemas/records.js';
import type { ConsumedBatch } from '../../topics/index.js';
import type { EndpointLimiter } from './limiter.js';

/** Longest a partition waits for a busy endpoint before its record is judged again. */
const ROOM_WAIT_MS = 1_000;

/**
 * A backlog for a healthy endpoint waits in the log, not on a retry tier: when an endpoint of
 * `tasks` has a full queue but answers promptly, the partition pauses until the endpoint has room
 * (or `ROOM_WAIT_MS` passed), and the record is fetched again then. Sending those deliveries to
 * the first tier instead would write each one again, and again each time they come back to a queue
 * still full, while the endpoint idles until the tier's delay. An endpoint that keeps requests open
 * longer still has its deliveries moved to the tier, so it holds no partition. True when the
 * partition was paused: leave the record and the rest of the batch.
 */
export function waitForBusyEndpoints(limiter: EndpointLimiter, tasks: readonly DeliveryTask[], batch: Pick<ConsumedBatch, 'pause'>): boolean {
  const busy = [...new Set(tasks.map((task) => task.target_id))].filter((target) => limiter.isFull(target));
  if (busy.length === 0 || !busy.every((target) => limiter.answersPromptly(target))) return false;
  const resume = batch.pause();
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, ROOM_WAIT_MS)));
  void Promise.race([Promise.all(busy.map((target) => limiter.room(target))), waited]).then(() => {
    clearTimeout(timer);
    resume();
  });
  return true;
}
