import type { CampaignPauseReason } from '../../events/payloads.js';
import { defaultThresholds, type RateThreshold, type Thresholds, type WatchedRate } from './thresholds.js';

export { isNegativeReply } from '../contacts/keywords.js';

/** One fact of a campaign's send or of its recipient, as the campaign processor reads it from the log. */
export type CampaignFact = {
  readonly at: number;
  readonly campaignId: string;
  /** Null for a recipient skipped before any number was chosen (opted out at send time): it counts for the campaign only. */
  readonly instanceId: string | null;
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
const tallied = ['sends', 'failure', 'block', 'opt_out', 'negative_reply'] as const;

/** The running sum of a minutes window: the buckets from `first` (an absolute bucket index) to the latest. */
interface Span {
  first: number;
  readonly sum: Tally;
}

/**
 * The sliding windows of one campaign or one number, in memory bounded by the largest window of
 * each kind: a mark per counted event in the last sends, a tally per minute in the last minutes,
 * with a running sum per minutes window so that judging one costs the minutes it slid, not its length.
 */
class Windows {
  /** Sends so far: the sequence number of the latest. */
  private sends = 0;
  /** Per rate, the sequence number of the send each event followed, oldest first, within the last `maxSends` sends. */
  private readonly marks: Record<WatchedRate, number[]> = { failure: [], block: [], opt_out: [], negative_reply: [] };
  /** One tally per minute that had a fact, oldest first; a late fact counts in the latest minute. */
  private readonly buckets: { readonly minute: number; readonly tally: Tally }[] = [];
  /** Buckets dropped from the front: bucket `i` is `buckets[i - dropped]`. */
  private dropped = 0;
  private readonly spans = new Map<number, Span>();

  constructor(
    private readonly maxSends: number,
    minuteWindows: readonly number[],
  ) {
    for (const minutes of minuteWindows) this.spans.set(minutes, { first: 0, sum: emptyTally() });
  }

  record(fact: CampaignFact, rate: WatchedRate | undefined): void {
    const send = isSend(fact.kind);
    if (send) this.sends++;
    if (rate) {
      const marks = this.marks[rate];
      marks.push(this.sends);
      while (marks.length > 0 && (marks.length > this.maxSends || marks[0]! <= this.sends - this.maxSends)) marks.shift();
    }
    if (this.spans.size === 0) return;
    const latest = this.buckets[this.buckets.length - 1];
    const minute = Math.max(Math.floor(fact.at / MINUTE), latest?.minute ?? -Infinity);
    if (latest?.minute !== minute) {
      this.buckets.push({ minute, tally: emptyTally() });
      for (const [minutes, span] of this.spans) this.slide(span, minute - minutes);
      const kept = Math.min(...[...this.spans.values()].map((span) => span.first));
      this.buckets.splice(0, kept - this.dropped);
      this.dropped = kept;
    }
    const index = this.dropped + this.buckets.length - 1;
    const tally = this.buckets[this.buckets.length - 1]!.tally;
    const add = (into: Tally) => {
      if (send) into.sends++;
      if (rate) into[rate]++;
    };
    add(tally);
    for (const span of this.spans.values()) if (index >= span.first) add(span.sum);
  }

  /** The sends in the window and how many of them ended as `rate`. */
  figures(rule: RateThreshold, now: number): { sample: number; count: number } {
    if ('sends' in rule.window) {
      const from = this.sends - rule.window.sends;
      return { sample: Math.min(this.sends, rule.window.sends), count: this.marks[rule.rate].filter((mark) => mark > from).length };
    }
    const span = this.spans.get(rule.window.minutes)!;
    this.slide(span, Math.floor(now / MINUTE) - rule.window.minutes);
    return { sample: span.sum.sends, count: span.sum[rule.rate] };
  }

  /** Takes the buckets of minutes up to `through` out of the span. */
  private slide(span: Span, through: number): void {
    for (let bucket = this.buckets[span.first - this.dropped]; bucket && bucket.minute <= through; bucket = this.buckets[++span.first - this.dropped]) {
      for (const key of tallied) span.sum[key] -= bucket.tally[key];
    }
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

function sizes(rules: readonly RateThreshold[], scope: RateThreshold['scope']): { sends: number; minutes: number[] } {
  const mine = rules.filter((rule) => rule.scope === scope);
  return {
    sends: Math.max(0, ...mine.map((rule) => ('sends' in rule.window ? rule.window.sends : 0))),
    minutes: [...new Set(mine.flatMap((rule) => ('minutes' in rule.window ? [rule.window.minutes] : [])))],
  };
}

class Autopilot implements CampaignWatch {
  private readonly campaigns = new Map<string, { readonly windows: Windows; readonly numbers: Set<string> }>();
  private readonly numbers = new Map<string, Windows>();
  private readonly health = new Map<string, { readonly status: string; readonly warming: boolean }>();
  private readonly campaignSize: { sends: number; minutes: number[] };
  private readonly numberSize: { sends: number; minutes: number[] };

  constructor(private readonly thresholds: Thresholds) {
    this.campaignSize = sizes(thresholds.rates, 'campaign');
    this.numberSize = sizes(thresholds.rates, 'number');
  }

  record(fact: CampaignFact): void {
    const kind = fact.kind === 'failed' && fact.reason === BLOCKED_ERROR_CODE ? 'blocked' : fact.kind;
    const rate = counted[kind];
    if (!rate && !isSend(kind)) return;
    const seen = { ...fact, kind };
    const campaign = touch(this.campaigns, fact.campaignId, () => ({ windows: new Windows(this.campaignSize.sends, this.campaignSize.minutes), numbers: new Set<string>() }));
    campaign.windows.record(seen, rate);
    if (fact.instanceId === null) return;
    campaign.numbers.add(fact.instanceId);
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
