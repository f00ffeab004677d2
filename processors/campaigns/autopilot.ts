import type { CampaignPauseReason } from '../../events/payloads.js';
import { defaultThresholds, type RateThreshold, type Thresholds, type WatchedRate } from './thresholds.js';

export { isNegativeReply } from '../contacts/keywords.js';

/** One fact of a campaign's send or of its recipient, as the campaign processor reads it from the log. */
export type CampaignFact = {
  readonly at: number;
  readonly campaignId: string;
  readonly instanceId: string;
  readonly kind: 'sent' | 'delivered' | 'read' | 'failed' | 'blocked' | 'opted_out' | 'negative_reply' | 'replied';
  /** A failure's error_code: `failed` with `recipient_blocked` counts as `blocked`. */
  readonly reason?: string;
};

/** Why the autopilot pauses a campaign: the `campaign.paused` payload's reason, figures and thresholds. */
export interface PauseDecision {
  readonly reason: CampaignPauseReason;
  readonly scope: 'campaign' | 'number';
  readonly instance_id: string | null;
  readonly figures: Record<string, number>;
  readonly thresholds: Record<string, number>;
}

export interface CampaignWatch {
  record(fact: CampaignFact): void;
  /** Whether the campaign must pause now, and why; undefined while it may go on. */
  trip(campaignId: string, now: number): PauseDecision | undefined;
  /** The number's latest state (from its InstanceState records). */
  numberHealth?(instanceId: string, status: string, warming: boolean): void;
}

/** The error code of a send to a recipient who blocked the number (the sandbox's; the real network says nothing). */
export const BLOCKED_ERROR_CODE = 'recipient_blocked';

const MINUTE = 60_000;
/** Campaigns and numbers watched at once: beyond it, the one heard of least recently is forgotten. */
const WATCHED = 10_000;

const counted: Partial<Record<CampaignFact['kind'], WatchedRate>> = { failed: 'failure', blocked: 'block', opted_out: 'opt_out', negative_reply: 'negative_reply' };
const isSend = (kind: CampaignFact['kind']) => kind === 'sent' || kind === 'failed' || kind === 'blocked';
const reasons = { failure: 'failure_rate', block: 'block_rate', opt_out: 'opt_out_rate', negative_reply: 'negative_reply_rate' } as const;
const countNames = { failure: 'failed', block: 'blocked', opt_out: 'opted_out', negative_reply: 'negative_replies' } as const;

type Tally = Record<WatchedRate | 'sends', number>;
const emptyTally = (): Tally => ({ sends: 0, failure: 0, block: 0, opt_out: 0, negative_reply: 0 });

/** The sliding windows of one campaign or one number, in memory bounded by the largest window of each kind. */
class Windows {
  /** Sends so far: the sequence number of the latest. */
  private sends = 0;
  /** Per rate, the sequence number of the send each event followed, oldest first, within the last `maxSends` sends. */
  private readonly marks: Record<WatchedRate, number[]> = { failure: [], block: [], opt_out: [], negative_reply: [] };
  /** Per minute, what happened in it, for the last `maxMinutes` minutes. */
  private readonly minutes = new Map<number, Tally>();
  private latestMinute = -Infinity;

  constructor(
    private readonly maxSends: number,
    private readonly maxMinutes: number,
  ) {}

  record(fact: CampaignFact, rate: WatchedRate | undefined): void {
    const send = isSend(fact.kind);
    if (send) this.sends++;
    if (rate) {
      const marks = this.marks[rate];
      marks.push(this.sends);
      while (marks.length > 0 && (marks.length > this.maxSends || marks[0]! <= this.sends - this.maxSends)) marks.shift();
    }
    const minute = Math.floor(fact.at / MINUTE);
    if (this.maxMinutes === 0 || minute <= this.latestMinute - this.maxMinutes) return;
    let tally = this.minutes.get(minute);
    if (!tally) {
      tally = emptyTally();
      this.minutes.set(minute, tally);
      this.latestMinute = Math.max(this.latestMinute, minute);
      for (const kept of this.minutes.keys()) if (kept <= this.latestMinute - this.maxMinutes) this.minutes.delete(kept);
    }
    if (send) tally.sends++;
    if (rate) tally[rate]++;
  }

  /** The sends in the window and how many of them ended as `rate`. */
  figures(rule: RateThreshold, now: number): { sample: number; count: number } {
    if ('sends' in rule.window) {
      const from = this.sends - rule.window.sends;
      return { sample: Math.min(this.sends, rule.window.sends), count: this.marks[rule.rate].filter((mark) => mark > from).length };
    }
    const from = Math.floor(now / MINUTE) - rule.window.minutes;
    let sample = 0;
    let count = 0;
    for (const [minute, tally] of this.minutes) {
      if (minute <= from) continue;
      sample += tally.sends;
      count += tally[rule.rate];
    }
    return { sample, count };
  }
}

/** Keeps at most `WATCHED` entries, forgetting the least recently touched. */
function touch<V>(map: Map<string, V>, key: string, create: () => V): V {
  const value = map.get(key) ?? create();
  map.delete(key);
  map.set(key, value);
  if (map.size > WATCHED) map.delete(map.keys().next().value!);
  return value;
}

function judge(rule: RateThreshold, { sample, count }: { sample: number; count: number }, factor: number, instanceId: string | null): PauseDecision | undefined {
  const limit = rule.limit * factor;
  const maxCount = rule.max_count === undefined ? undefined : Math.max(1, Math.floor(rule.max_count * factor));
  const rate = sample === 0 ? 0 : count / sample;
  if (!((maxCount !== undefined && count >= maxCount) || (sample >= rule.min_sample && rate >= limit))) return undefined;
  const window: Record<string, number> = 'sends' in rule.window ? { window_sends: rule.window.sends } : { window_minutes: rule.window.minutes };
  return {
    reason: reasons[rule.rate],
    scope: rule.scope,
    instance_id: instanceId,
    figures: { sends: sample, [countNames[rule.rate]]: count, rate: Math.round(rate * 10_000) / 10_000, ...(factor === 1 ? {} : { warming: 1 }) },
    thresholds: { ...window, min_sample: rule.min_sample, limit, ...(maxCount === undefined ? {} : { max_count: maxCount }) },
  };
}

function largest(rules: readonly RateThreshold[], scope: RateThreshold['scope']): { sends: number; minutes: number } {
  const mine = rules.filter((rule) => rule.scope === scope);
  return {
    sends: Math.max(0, ...mine.map((rule) => ('sends' in rule.window ? rule.window.sends : 0))),
    minutes: Math.max(0, ...mine.map((rule) => ('minutes' in rule.window ? rule.window.minutes : 0))),
  };
}

class Autopilot implements CampaignWatch {
  private readonly campaigns = new Map<string, { readonly windows: Windows; readonly numbers: Set<string> }>();
  private readonly numbers = new Map<string, Windows>();
  private readonly health = new Map<string, { readonly status: string; readonly warming: boolean }>();
  private readonly campaignSize: { sends: number; minutes: number };
  private readonly numberSize: { sends: number; minutes: number };

  constructor(private readonly thresholds: Thresholds) {
    this.campaignSize = largest(thresholds.rates, 'campaign');
    this.numberSize = largest(thresholds.rates, 'number');
  }

  record(fact: CampaignFact): void {
    const kind = fact.kind === 'failed' && fact.reason === BLOCKED_ERROR_CODE ? 'blocked' : fact.kind;
    const rate = counted[kind];
    if (!rate && !isSend(kind)) return;
    const seen = { ...fact, kind };
    const campaign = touch(this.campaigns, fact.campaignId, () => ({ windows: new Windows(this.campaignSize.sends, this.campaignSize.minutes), numbers: new Set<string>() }));
    campaign.numbers.add(fact.instanceId);
    campaign.windows.record(seen, rate);
    touch(this.numbers, fact.instanceId, () => new Windows(this.numberSize.sends, this.numberSize.minutes)).record(seen, rate);
  }

  numberHealth(instanceId: string, status: string, warming: boolean): void {
    touch(this.health, instanceId, () => ({ status, warming }));
    this.health.set(instanceId, { status, warming });
  }

  trip(campaignId: string, now: number): PauseDecision | undefined {
    const campaign = this.campaigns.get(campaignId);
    if (!campaign) return undefined;
    const { pause_on: pauseOn, warming_factor: warmingFactor } = this.thresholds.health;
    for (const instanceId of campaign.numbers) {
      const status = this.health.get(instanceId)?.status;
      if (status !== undefined && (pauseOn as readonly string[]).includes(status)) {
        return {
          reason: 'number_unhealthy',
          scope: 'number',
          instance_id: instanceId,
          figures: { [status]: 1 },
          thresholds: Object.fromEntries(pauseOn.map((paused) => [paused, 1])),
        };
      }
    }
    for (const rule of this.thresholds.rates) {
      if (rule.scope === 'campaign') {
        const decision = judge(rule, campaign.windows.figures(rule, now), 1, null);
        if (decision) return decision;
        continue;
      }
      for (const instanceId of campaign.numbers) {
        const windows = this.numbers.get(instanceId);
        if (!windows) continue;
        const factor = this.health.get(instanceId)?.warming ? warmingFactor : 1;
        const decision = judge(rule, windows.figures(rule, now), factor, instanceId);
        if (decision) return decision;
      }
    }
    return undefined;
  }
}

/** The safety autopilot: sliding windows per campaign and per number, judged against `thresholds`. */
export function createAutopilot(thresholds: Thresholds = defaultThresholds): CampaignWatch {
  return new Autopilot(thresholds);
}
