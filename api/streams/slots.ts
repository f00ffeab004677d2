/** At most `size` holders at once; the others wait their turn, in order, unless they give up first. */
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves with a release function once a slot is free; rejects if `signal` aborts first. */
  async take(signal: AbortSignal): Promise<() => void> {
    // An abort before the call would never fire the listener below: the caller is gone already.
    signal.throwIfAborted();
    if (this.used >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal.removeEventListener('abort', giveUp);
          resolve();
        };
        const giveUp = () => {
          this.waiting.splice(this.waiting.indexOf(turn), 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('gave up waiting for a slot'));
        };
        this.waiting.push(turn);
        signal.addEventListener('abort', giveUp, { once: true });
      });
    } else {
      this.used++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    };
  }
}
