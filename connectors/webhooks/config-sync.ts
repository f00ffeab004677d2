import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

/** Catch-ups of the directory start at most this often; events that need one wait a little. */
const MIN_INTERVAL_MS = 250;
/** A catch-up that takes longer gives up: the event is judged on what the directory holds. */
const CATCH_UP_TIMEOUT_MS = 5_000;

/**
 * Closes the gap between writing a webhook and this process's directory seeing it. The directory
 * follows `gw.config` on its own; an event that finds no webhook (or an account event, which goes
 * to every webhook of the account) may come from a moment when a webhook had just been written.
 * Such an event waits for a catch-up: the end offsets of `gw.config` are read, and the directory
 * applies everything up to them. One catch-up serves every event written before it started.
 * The dispatcher keeps a second one for the connections view (`gw.connections`), so a connection
 * written just before its connect.* event (or an operation event) finds its partner.
 */
/** A view followed from a topic (the directory, the connections view): applied up to given end offsets. */
export interface ReachableView {
  reached(ends: ReadonlyMap<number, number>, timeoutMs?: number): Promise<void>;
}

export class ConfigSync {
  private current: { readonly startedAt: number; readonly done: Promise<void> } | undefined;
  private queued: Promise<void> | undefined;

  constructor(
    private readonly directory: ReachableView,
    private readonly readEnds: () => Promise<ReadonlyMap<number, number>>,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the directory holds every config record written before `time` (epoch ms). */
  covering(time: number): Promise<void> {
    if (this.current !== undefined && this.current.startedAt >= time) return this.current.done;
    this.queued ??= (this.current?.done ?? Promise.resolve()).then(async () => {
      const since = this.current === undefined ? MIN_INTERVAL_MS : Date.now() - this.current.startedAt;
      if (since < MIN_INTERVAL_MS) await sleep(MIN_INTERVAL_MS - since);
      this.queued = undefined;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<void> {
    const startedAt = Date.now();
    const done = this.readEnds()
      .then((ends) => this.directory.reached(ends, CATCH_UP_TIMEOUT_MS))
      .catch((err: unknown) => this.logger.warn({ err }, 'webhook directory or connections view not caught up; judging events on what it holds'));
    this.current = { startedAt, done };
    return done;
  }
}
