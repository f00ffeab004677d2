import type { Logger } from 'pino';
import { hasProtocolError } from './failure.js';

/** The next offset to read of one partition, as a consumer group stores it. */
export interface GroupPosition {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: number;
}

export interface GroupCommits {
  /**
   * Records positions to commit; they go out together, at most once per interval. Resolves once
   * they are committed when the interval had passed, at once when they wait for the next commit.
   */
  add(positions: readonly GroupPosition[]): Promise<void>;
  /**
   * Commits what is pending, and from then on each `add` at once: the member is leaving its group,
   * and a batch that ends while it leaves commits before it is out (a timer would fire after).
   */
  leaving(): Promise<void>;
}

/**
 * Group offsets for consumers whose own store keeps the truth (a projection's `_offsets`): they
 * serve lag and where a new member starts, and one commit a second of every partition's latest
 * position serves both. Committed after each batch, they were a request and a write to
 * `__consumer_offsets` per batch of each of a processor's twenty groups, as many as the batches'
 * own round trips at low rates. A failed commit is logged and the positions wait for the next.
 */
export function groupCommits(
  commit: (positions: readonly GroupPosition[]) => Promise<void>,
  options: {
    readonly everyMs: number;
    readonly logger: Pick<Logger, 'warn' | 'debug'>;
    /** What the log says when a commit fails (the positions wait for the next). */
    readonly failed: string;
  },
): GroupCommits {
  const pending = new Map<string, GroupPosition>();
  let last = 0;
  let everyMs = options.everyMs;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    running = running.then(async () => {
      if (pending.size === 0) return;
      const positions = [...pending.values()];
      pending.clear();
      last = Date.now();
      try {
        await commit(positions);
      } catch (error) {
        for (const position of positions) {
          const key = `${position.topic}:${position.partition}`;
          if (!pending.has(key)) pending.set(key, position);
        }
        // The group moved on while the commit was under way: its next generation commits again.
        if (duringRebalance(error)) options.logger.debug({ err: error }, options.failed);
        else options.logger.warn({ err: error }, options.failed);
      }
    });
    return running;
  };

  return {
    add(positions) {
      for (const position of positions) pending.set(`${position.topic}:${position.partition}`, position);
      if (timer) return Promise.resolve();
      const wait = last + everyMs - Date.now();
      if (wait <= 0) return flush();
      timer = setTimeout(() => void flush(), wait).unref();
      return Promise.resolve();
    },
    leaving() {
      everyMs = 0;
      return flush();
    },
  };
}

/** kafkajs' protocol errors of a commit made by a member whose group is rebalancing. */
const REBALANCING = new Set(['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID']);

/** Whether a commit failed because the group moved on meanwhile (its next generation commits again). */
export function duringRebalance(error: unknown): boolean {
  return hasProtocolError(error, REBALANCING);
}
