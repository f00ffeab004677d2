/**
 * Gathers what is submitted in one turn of the event loop (the batches kafkajs hands out from one
 * fetch) and passes it to `flush` together. One flush at a time, in the order of submission: what
 * comes while one runs waits for the next. Each submission settles with its flush.
 */
export function gathering<T>(flush: (items: readonly T[]) => Promise<void>): (item: T) => Promise<void> {
  let waiting: { item: T; settle: (error?: Error) => void }[] = [];
  let previous: Promise<void> = Promise.resolve();
  return (item) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ item, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (waiting.length > 1) return;
      previous = previous
        .then(() => new Promise<void>((next) => setImmediate(next)))
        .then(async () => {
          const taken = waiting;
          waiting = [];
          const failed = await flush(taken.map((t) => t.item)).then(
            () => undefined,
            (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
          );
          for (const t of taken) t.settle(failed);
        });
    });
}
