import { withDeadline } from '../../shared/deadline.js';

/**
 * The received messages and group facts of one number on their way to the log, one at a time in
 * the order the network gave them (issue 18): Baileys hands batches over without waiting for the
 * last one, so a text would otherwise overtake an image still downloading. A message waits for the
 * media of the one before it; each download is bounded (docs/baileys.md), so the queue always moves.
 */
export class ReceivedQueue {
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;

  /** Runs `task` after every task queued before it; a failure is the task's own to report. */
  push(task: () => Promise<void>): void {
    this.queued += 1;
    this.tail = this.tail
      .then(task)
      .catch(() => undefined)
      .finally(() => {
        this.queued -= 1;
      });
  }

  /** Resolves once nothing is queued (tasks queued meanwhile included) or `ms` have passed; true when nothing is left. */
  async drain(ms: number): Promise<boolean> {
    const until = performance.now() + ms;
    while (this.queued > 0) {
      const left = until - performance.now();
      if (left <= 0) return false;
      await withDeadline(this.tail, left).catch(() => undefined);
    }
    return true;
  }
}
