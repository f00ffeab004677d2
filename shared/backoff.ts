const BASE_MS = 1_000;
const MAX_BACKOFF_MS = 15_000;

/** The wait before try `attempt + 1`: exponential, capped, with jitter so members do not retry in step. */
export function backoffMs(attempt: number, baseMs = BASE_MS, maxMs = MAX_BACKOFF_MS): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}
