/** A usage period: a calendar month in UTC. `start` is inclusive, `end` exclusive. */
export interface Period {
  /** First day, `YYYY-MM-01`: how the period is stored and named in event ids. */
  readonly id: string;
  readonly start: Date;
  readonly end: Date;
}

/** The period holding the instant `ms`. */
export function periodOf(ms: number): Period {
  const at = new Date(ms);
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { id: start.toISOString().slice(0, 10), start, end };
}
