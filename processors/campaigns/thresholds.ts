import type { InstanceStatus } from '../../schemas/records.js';

/** What the autopilot counts: sends that failed, reached a blocker, led to an opt-out or to a negative reply. */
export type WatchedRate = 'failure' | 'block' | 'opt_out' | 'negative_reply';

/** A sliding window: the last `sends` sends, or the last `minutes` minutes. */
export type RateWindow = { readonly sends: number } | { readonly minutes: number };

/**
 * One rule of the autopilot: over `window`, the share of sends that ended as `rate` reaches
 * `limit` once the window holds `min_sample` sends, or their count reaches `max_count` whatever
 * the sample (a burst at the start of a campaign).
 */
export interface RateThreshold {
  readonly rate: WatchedRate;
  /** `campaign`: the campaign's own sends; `number`: the sends of each of its numbers, across the campaigns watched. */
  readonly scope: 'campaign' | 'number';
  readonly window: RateWindow;
  readonly min_sample: number;
  readonly limit: number;
  readonly max_count?: number;
}

export interface Thresholds {
  /** Checked in this order; the first that trips pauses the campaign. */
  readonly rates: readonly RateThreshold[];
  readonly health: {
    /** A campaign sending from a number in one of these states is paused. */
    readonly pause_on: readonly InstanceStatus[];
    /**
     * While a number warms, its number-scope limits and counts are multiplied by this (counts
     * rounded down, at least 1): a new number is banned on fewer complaints.
     */
    readonly warming_factor: number;
  };
}

/**
 * The autopilot's defaults, documented in docs/campaigns.md ("Safety autopilot"). Blocks come
 * first: they are what gets a number banned (the sandbox bans at 10 sends to blockers in its last
 * 200 sends or in an hour, connectors/sandbox/bans.ts), so the number-scope block rules trip at 5.
 */
export const defaultThresholds: Thresholds = {
  rates: [
    { rate: 'block', scope: 'number', window: { sends: 200 }, min_sample: 100, limit: 0.03, max_count: 5 },
    { rate: 'block', scope: 'number', window: { minutes: 60 }, min_sample: 100, limit: 0.03, max_count: 5 },
    { rate: 'block', scope: 'campaign', window: { sends: 500 }, min_sample: 100, limit: 0.02, max_count: 8 },
    { rate: 'failure', scope: 'number', window: { sends: 100 }, min_sample: 30, limit: 0.15 },
    { rate: 'failure', scope: 'campaign', window: { sends: 200 }, min_sample: 50, limit: 0.1 },
    { rate: 'opt_out', scope: 'number', window: { minutes: 1_440 }, min_sample: 100, limit: 0.05 },
    { rate: 'opt_out', scope: 'campaign', window: { sends: 500 }, min_sample: 100, limit: 0.05 },
    { rate: 'negative_reply', scope: 'number', window: { minutes: 1_440 }, min_sample: 100, limit: 0.02, max_count: 10 },
    { rate: 'negative_reply', scope: 'campaign', window: { sends: 500 }, min_sample: 100, limit: 0.02, max_count: 10 },
  ],
  health: { pause_on: ['banned', 'logged_out'], warming_factor: 0.5 },
};
