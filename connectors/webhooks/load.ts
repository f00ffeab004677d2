/**
 * Deliveries taken in and not settled, across the dispatcher's consumers. Past `limit`, the
 * partition that just delivered a batch is paused; once half of them have settled, every paused
 * partition resumes. This bounds memory however many endpoints are slow.
 */
export class Load {
  private count = 0;
  private paused: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  add(deliveries: number): void {
    this.count += deliveries;
  }

  done(deliveries: number): void {
    this.count -= deliveries;
    if (this.count <= this.limit / 2 && this.paused.length > 0) this.resumeAll();
    if (this.count === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Pauses a partition (given its pause function) when too much is in flight. */
  hold(pause: () => () => void): void {
    if (this.count >= this.limit) this.paused.push(pause());
  }

  inFlight(): number {
    return this.count;
  }

  /** Resolves once nothing is in flight. */
  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private resumeAll(): void {
    const paused = this.paused;
    this.paused = [];
    for (const resume of paused) resume();
  }
}
