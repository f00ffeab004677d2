interface Lane {
  running: number;
  /** When each running job started, by a number of its own. */
  readonly startedAt: Map<number, number>;
  readonly waiting: Array<() => void>;
  /** Callers waiting for the lane's queue to be half empty. */
  readonly roomWaiters: Array<() => void>;
}

/** A lane whose running jobs all started less than this long ago answers promptly. */
const PROMPT_MS = 1_000;

/**
 * The bound per endpoint that keeps one slow endpoint from holding the others: at most
 * `concurrency` jobs of one key run at a time and at most `queue` wait; a job beyond that is
 * refused, and the caller moves it to a retry tier instead of waiting. A full lane of an endpoint
 * that answers promptly (a healthy endpoint behind a backlog) is worth waiting for instead:
 * `answersPromptly` tells which, and `room` when to go on.
 */
export class EndpointLimiter {
  private readonly lanes = new Map<string, Lane>();
  private readonly concurrency: number;
  private jobs = 0;

  constructor(
    concurrency: number,
    private readonly queue: number,
    private readonly now: () => number = Date.now,
  ) {
    this.concurrency = Math.max(1, concurrency);
  }

  /** Runs `job` now or once a slot of `key` frees; undefined when the key's queue is full. */
  run<T>(key: string, job: () => Promise<T>): Promise<T> | undefined {
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = { running: 0, startedAt: new Map(), waiting: [], roomWaiters: [] };
      this.lanes.set(key, lane);
    }
    if (this.isFullLane(lane)) return undefined;
    if (lane.running < this.concurrency) return this.start(key, lane, job);
    const admitted = lane;
    return new Promise<T>((resolve, reject) => admitted.waiting.push(() => void this.start(key, admitted, job).then(resolve, reject)));
  }

  /** Runs `job` in a slot of `lane`; the slot frees (and the next job starts) as it settles. */
  private start<T>(key: string, lane: Lane, job: () => Promise<T>): Promise<T> {
    const id = ++this.jobs;
    lane.running += 1;
    lane.startedAt.set(id, this.now());
    const release = () => {
      lane.running -= 1;
      lane.startedAt.delete(id);
      const next = lane.waiting.shift();
      if (next !== undefined) next();
      else if (lane.running === 0) this.lanes.delete(key);
      if (this.hasRoom(lane)) for (const wake of lane.roomWaiters.splice(0)) wake();
    };
    let running: Promise<T>;
    try {
      running = job();
    } catch (error) {
      running = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    running.then(release, release);
    return running;
  }

  /** Whether a job of `key` would be refused now. */
  isFull(key: string): boolean {
    const lane = this.lanes.get(key);
    return lane !== undefined && this.isFullLane(lane);
  }

  /** Whether every running job of `key` started less than a second ago: the endpoint answers, its queue moves. */
  answersPromptly(key: string): boolean {
    const lane = this.lanes.get(key);
    if (lane === undefined || lane.startedAt.size === 0) return true;
    return Math.min(...lane.startedAt.values()) > this.now() - PROMPT_MS;
  }

  /**
   * Resolves once the queue of `key` is down to half its bound. Not at the first free slot: the
   * caller paused a partition for the endpoint and fetches its records again when this resolves,
   * so one fetch brings half a queue of them in, while the lane works through the other half.
   */
  room(key: string): Promise<void> {
    const lane = this.lanes.get(key);
    if (lane === undefined || this.hasRoom(lane)) return Promise.resolve();
    return new Promise((resolve) => lane.roomWaiters.push(resolve));
  }

  /** Jobs of `key` running and waiting. */
  load(key: string): { readonly running: number; readonly waiting: number } {
    const lane = this.lanes.get(key);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  private isFullLane(lane: Lane): boolean {
    return lane.running >= this.concurrency && lane.waiting.length >= this.queue;
  }

  private hasRoom(lane: Lane): boolean {
    return !this.isFullLane(lane) && lane.waiting.length <= this.queue / 2;
  }
}
