/** Writes a batch of items gathered for one key; the same function (by identity) gathers into one batch. */
export type BatchWrite<T> = (items: readonly T[]) => Promise<void>;

interface OpenBatch {
  readonly write: BatchWrite<never>;
  readonly items: unknown[];
  readonly done: Promise<void>;
}

/**
 * Runs the tasks of one key one after another, in the order they were queued; different keys run
 * side by side. The records of one number are written in the order its facts happened, which the
 * compacted state topic needs (the last record wins).
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<void>>();
  /** The last task queued for a key when it is a batch that has not started: `gather` adds to it. */
  private readonly open = new Map<string, OpenBatch>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    this.open.delete(key);
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /**
   * Queues `item` to be written by `write`, together with the items queued after it while the
   * key's earlier tasks run: under load, one write carries many items, still in their order.
   */
  gather<T>(key: string, write: BatchWrite<T>, item: T): Promise<void> {
    const open = this.open.get(key);
    if (open?.write === write) {
      open.items.push(item);
      return open.done;
    }
    const items: T[] = [item];
    const done = this.run(key, () => {
      if (this.open.get(key)?.items === items) this.open.delete(key);
      return write(items);
    });
    this.open.set(key, { write, items, done });
    return done;
  }

  /** Resolves once every task queued so far has ended. */
  async drain(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}

interface GatheredCall<I, O> {
  readonly key: string;
  readonly item: I;
  answer?: O;
}

/**
 * A lookup whose calls for one key, made while an earlier call of that key is in flight, are
 * answered together by one call of `many` (one statement for a burst of requests instead of one
 * each). `many` answers its items in their order.
 */
export function gatheredCalls<I, O>(many: (key: string, items: readonly I[]) => Promise<readonly O[]>): (key: string, item: I) => Promise<O> {
  const serial = new KeyedSerial();
  const write = async (calls: readonly GatheredCall<I, O>[]): Promise<void> => {
    const answers = await many(calls[0]!.key, calls.map((call) => call.item));
    calls.forEach((call, i) => (call.answer = answers[i]));
  };
  return async (key, item) => {
    const call: GatheredCall<I, O> = { key, item };
    await serial.gather(key, write, call);
    return call.answer as O;
  };
}
