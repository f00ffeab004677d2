import { periodOf, type Granularity } from '../../processors/usage/index.js';
import { gatewayError } from '../errors.js';

const DAY_MS = 86_400_000;
/** Most periods one answer holds: a year of days, ten years of months. */
const MAX_PERIODS: Record<Granularity, number> = { day: 366, month: 120 };

export interface UsageRange {
  /** First and last day counted, `YYYY-MM-DD`, both inclusive. */
  readonly from: string;
  readonly to: string;
  readonly granularity: Granularity;
  /** `from` and the day after `to`, as ms: the half-open interval counted. */
  readonly startMs: number;
  readonly endMs: number;
  /** First day of every period in the range, oldest first. */
  readonly periods: readonly string[];
}

const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);
const monthStart = (ms: number) => periodOf(ms).start.getTime();
const nextMonth = (ms: number) => periodOf(ms).end.getTime();

/** The range a `GET /usage` asks for, defaulting to the current month so far; 400 when it is backwards or too long. */
export function usageRange(query: { from?: string; to?: string; granularity?: Granularity }, now: number): UsageRange {
  const granularity = query.granularity ?? 'day';
  const from = query.from ?? dayText(monthStart(now));
  const to = query.to ?? dayText(now);
  const startMs = dayMs(from);
  const endMs = dayMs(to) + DAY_MS;
  if (endMs <= startMs) throw gatewayError('invalid_request', { detail: 'to is before from' });
  const first = granularity === 'day' ? startMs : monthStart(startMs);
  const step = granularity === 'day' ? (ms: number) => ms + DAY_MS : nextMonth;
  const periods: string[] = [];
  for (let ms = first; ms < endMs; ms = step(ms)) {
    if (periods.length === MAX_PERIODS[granularity]) {
      throw gatewayError('invalid_request', { detail: `at most ${MAX_PERIODS[granularity]} periods of a ${granularity}` });
    }
    periods.push(dayText(ms));
  }
  return { from, to, granularity, startMs, endMs, periods };
}
