/**
 * A new number's send rate ramps up (docs/baileys.md#warming): networks treat a fresh number that
 * sends a lot at once as spam. Each row is [from day, sends per hour]; a number is `warming`
 * until its last row's day, then `connected` with no limit of ours.
 */
export const WARMING_SCHEDULE: readonly (readonly [fromDay: number, perHour: number])[] = [
  [0, 20],
  [1, 40],
  [3, 80],
  [5, 150],
  [7, Infinity],
];

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Sends per hour allowed `ageMs` after the number first connected. */
export function warmingRate(ageMs: number): number {
  const day = Math.max(0, ageMs) / DAY_MS;
  let rate = WARMING_SCHEDULE[0]![1];
  for (const [from, perHour] of WARMING_SCHEDULE) if (day >= from) rate = perHour;
  return rate;
}

/** Whether a number first connected at `firstConnectedAt` is still warming at `now`. */
export function isWarming(firstConnectedAt: number, now: number): boolean {
  return warmingRate(now - firstConnectedAt) !== Infinity;
}

/**
 * Spaces the sends of one number by the schedule: a send over the rate waits for its turn rather
 * than fail. Turns are handed out in call order, so sends keep their order.
 */
export class WarmingGate {
  private nextAt = 0;

  constructor(
    private readonly firstConnectedAt: () => number | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** How long the next send must wait (0 when it may go now), and its turn taken. */
  take(): number {
    const first = this.firstConnectedAt();
    const now = this.now();
    if (first === undefined) return 0;
    const rate = warmingRate(now - first);
    if (rate === Infinity) return 0;
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + HOUR_MS / rate;
    return at - now;
  }
}
