interface Lane {
  running: number;
  readonly waiting: Array<() => void>;
}

/**
 * The bound per endpoint that keeps one slow endpoint from holding the others: at most
 * `concurrency` jobs of one key run at a time and at most `queue` wait; a job beyond that is
 * refused, and the caller moves it to a retry tier instead of waiting.
 */
export class EndpointLimiter {
  private readonly lanes = new Map<string, Lane>();
  private readonly concurrency: number;

  constructor(
    concurrency: number,
    private readonly queue: number,
  ) {
    this.concurrency = Math.max(1, concurrency);
  }

  /** Runs `job` now or once a slot of `key` frees; undefined when the key's queue is full. */
  run<T>(key: string, job: () => Promise<T>): Promise<T> | undefined {
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = { running: 0, waiting: [] };
      this.lanes.set(key, lane);
    }
    if (lane.running >= this.concurrency && lane.waiting.length >= this.queue) return undefined;
    const admitted = lane;
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        admitted.running += 1;
        void job()
          .then(resolve, reject)
          .finally(() => {
            admitted.running -= 1;
            const next = admitted.waiting.shift();
            if (next !== undefined) next();
            else if (admitted.running === 0) this.lanes.delete(key);
          });
      };
      if (admitted.running < this.concurrency) start();
      else admitted.waiting.push(start);
    });
  }

  /** Jobs of `key` running and waiting. */
  load(key: string): { readonly running: number; readonly waiting: number } {
    const lane = this.lanes.get(key);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }
}
