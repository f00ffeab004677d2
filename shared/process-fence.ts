/**
 * The token of this process's current span of known liveness: it holds its liveness lock on one
 * Postgres connection and confirmed that lately (stack/member-liveness.ts). A peer that finds the
 * lock free brings forward the end of whatever was held under the token (a number's lease), so
 * whatever this process holds under a token it lets go as soon as the token ends.
 */
export class ProcessFence {
  private token: string | undefined;
  private readonly listeners = new Set<(token: string) => void>();

  /** The token held now; undefined from an end until the next begin. */
  get current(): string | undefined {
    return this.token;
  }

  /** A new span, once the liveness lock is held and recorded under `token`. */
  begin(token: string): void {
    this.end();
    this.token = token;
  }

  /** Ends the span held now (the lock's connection dropped, or went unconfirmed), telling every listener. */
  end(): void {
    const ended = this.token;
    if (ended === undefined) return;
    this.token = undefined;
    for (const listener of this.listeners) listener(ended);
  }

  /** Calls `listener` with each token that ends; returns what stops it. */
  onEnd(listener: (token: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
