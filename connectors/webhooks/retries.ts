import type { DeliveryTask } from '../../schemas/records.js';
import { createConsumer, liveFetchResuming, type TopicSpec } from '../../topics/index.js';
import { waitForBusyEndpoints } from './backpressure.js';
import { Intake, type ConsumerDeps, type RunningIntake } from './intake.js';

export interface RunningRetries extends RunningIntake {
  /** Clears the timers of partitions waiting for their head task to fall due. */
  clearTimers(): void;
}

/**
 * Later attempts: the group `<prefix>dispatcher.retry` reads the retry tiers of the schedule (and
 * the redeliveries by hand the API writes to the first tier). A partition whose head task is not
 * due yet is paused until it is, by a timer: nothing sleeps inside a batch, so heartbeats go on.
 */
export async function consumeRetries(deps: ConsumerDeps, tiers: readonly TopicSpec<DeliveryTask>[]): Promise<RunningRetries> {
  const groupId = `${deps.serdes.prefix}dispatcher.retry`;
  const consumer = await createConsumer(deps.kafka, deps.serdes, { groupId, topics: tiers, fromBeginning: true, fetch: liveFetchResuming });
  const intake = new Intake({ ...deps, consumer, groupId, prefix: deps.serdes.prefix });
  const timers = new Set<NodeJS.Timeout>();
  const resumeAfter = (waitMs: number, resume: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resume();
    }, waitMs);
    timers.add(timer);
  };
  await intake.consume(tiers, (record, task, batch) => {
    const waitMs = task.not_before - Date.now();
    if (waitMs > 0) {
      // The records from here on are fetched again once the partition resumes.
      resumeAfter(waitMs, batch.pause());
      return false;
    }
    if (waitForBusyEndpoints(deps.limiter, [task], batch)) return false;
    intake.admit(record, () => [() => deps.deliver(task, record.headers)]);
    return true;
  });
  return {
    intake,
    stop: () => consumer.stop(),
    clearTimers() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
