/**
 * Runs the tasks of one key one after another, in the order they were queued; different keys run
 * side by side. The records of one number are written in the order its facts happened, which the
 * compacted state topic needs (the last record wins).
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
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

  /** Resolves once every task queued so far has ended. */
  async drain(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}
