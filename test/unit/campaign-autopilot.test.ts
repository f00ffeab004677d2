import { describe, expect, it } from 'vitest';
import { BanWatch, banRule } from '../../connectors/sandbox/bans.js';
import type { CampaignPausedPayload } from '../../events/payloads.js';
import { sampleEvent } from '../../events/samples.js';
import { envelopeOf } from '../../events/envelope.js';
import { createAutopilot, isNegativeReply, type CampaignFact } from '../../processors/campaigns/autopilot.js';
import { defaultThresholds, type RateThreshold, type Thresholds } from '../../processors/campaigns/thresholds.js';

const minute = 60_000;
const only = (...rates: RateThreshold[]): Thresholds => ({ rates, health: defaultThresholds.health });
const fact = (kind: CampaignFact['kind'], at = 0, campaignId = 'cmp_1', instanceId = 'inst_1', reason?: string): CampaignFact =>
  ({ at, campaignId, instanceId, kind, ...(reason === undefined ? {} : { reason }) });

describe('the safety autopilot', () => {
  const failures: RateThreshold = { rate: 'failure', scope: 'campaign', window: { sends: 10 }, min_sample: 10, limit: 0.5 };

  it('judges a rate only once the window holds the minimum sample, then slides the window over the last sends', () => {
    const watch = createAutopilot(only(failures));
    for (let i = 0; i < 5; i++) watch.record(fact('failed'));
    expect(watch.trip('cmp_1', 0)).toBeUndefined();
    for (let i = 0; i < 4; i++) watch.record(fact('sent'));
    expect(watch.trip('cmp_1', 0)).toBeUndefined();
    watch.record(fact('sent'));
    expect(watch.trip('cmp_1', 0)).toEqual({
      reason: 'failure_rate',
      scope: 'campaign',
      instance_id: null,
      figures: { sends: 10, failed: 5, rate: 0.5 },
      thresholds: { window_sends: 10, min_sample: 10, limit: 0.5 },
    });
    // Deliveries, reads and replies are no sends: the window does not move.
    for (const kind of ['delivered', 'read', 'replied'] as const) watch.record(fact(kind));
    expect(watch.trip('cmp_1', 0)?.reason).toBe('failure_rate');
    watch.record(fact('sent'));
    expect(watch.trip('cmp_1', 0)).toBeUndefined();
  });

  it('counts within the last minutes, forgetting what slid out', () => {
    const rule: RateThreshold = { rate: 'block', scope: 'number', window: { minutes: 60 }, min_sample: 1_000, limit: 1, max_count: 3 };
    const watch = createAutopilot(only(rule));
    for (let i = 0; i < 3; i++) watch.record(fact('blocked', i * 20 * minute));
    expect(watch.trip('cmp_1', 40 * minute)).toMatchObject({ reason: 'block_rate', scope: 'number', instance_id: 'inst_1', figures: { sends: 3, blocked: 3 }, thresholds: { window_minutes: 60, max_count: 3 } });
    expect(watch.trip('cmp_1', 61 * minute)).toBeUndefined();
    // A send failing with the sandbox's recipient_blocked counts as a block.
    watch.record(fact('failed', 62 * minute, 'cmp_1', 'inst_1', 'recipient_blocked'));
    expect(watch.trip('cmp_1', 62 * minute)).toMatchObject({ figures: { blocked: 3 } });
    // Heard of two hours late: its minute has left the window.
    expect(watch.trip('cmp_1', 200 * minute)).toBeUndefined();
    for (let i = 0; i < 3; i++) watch.record(fact('blocked', 62 * minute));
    expect(watch.trip('cmp_1', 200 * minute)).toBeUndefined();
  });

  it('sums a minutes window exactly as a count of its facts would, while other windows slide beside it', () => {
    for (const [judged, beside] of [[7, 3], [3, 7]] as const) {
      const next = random(judged);
      const never: RateThreshold = { rate: 'block', scope: 'campaign', window: { minutes: beside }, min_sample: 0, limit: 2 };
      const always: RateThreshold = { rate: 'block', scope: 'campaign', window: { minutes: judged }, min_sample: 0, limit: 0 };
      const watch = createAutopilot(only(never, always));
      const facts: CampaignFact[] = [];
      let at = 0;
      let now = 0;
      for (let i = 0; i < 3_000; i++) {
        at = Math.max(at, now - minute) + next() * 40_000;
        const recorded = fact(next() < 0.2 ? 'blocked' : 'sent', at);
        facts.push(recorded);
        watch.record(recorded);
        // The clock never goes back; a fact can reach the autopilot a little after its time.
        now = Math.max(now, at + next() * 5 * minute);
        if (next() < 0.5) continue;
        const inWindow = facts.filter((f) => Math.floor(f.at / minute) > Math.floor(now / minute) - judged);
        expect(watch.trip('cmp_1', now)!.figures, `fact ${i}`).toMatchObject({ sends: inWindow.length, blocked: inWindow.filter((f) => f.kind === 'blocked').length });
      }
    }
  });

  it('watches a number across the campaigns sending from it, and a campaign alone on its own sends', () => {
    const numberRule: RateThreshold = { rate: 'opt_out', scope: 'number', window: { sends: 100 }, min_sample: 4, limit: 0.5 };
    const campaignRule: RateThreshold = { rate: 'negative_reply', scope: 'campaign', window: { sends: 100 }, min_sample: 2, limit: 1 };
    const watch = createAutopilot(only(numberRule, campaignRule));
    for (const campaign of ['cmp_a', 'cmp_b']) {
      watch.record(fact('sent', 0, campaign, 'inst_shared'));
      watch.record(fact('sent', 0, campaign, 'inst_shared'));
      watch.record(fact('opted_out', 0, campaign, 'inst_shared'));
    }
    watch.record(fact('sent', 0, 'cmp_b', 'inst_other'));
    // Two opt-outs in four sends of the shared number: both campaigns pause, naming it.
    for (const campaign of ['cmp_a', 'cmp_b']) expect(watch.trip(campaign, 0)).toMatchObject({ reason: 'opt_out_rate', scope: 'number', instance_id: 'inst_shared', figures: { sends: 4, opted_out: 2 } });

    const apart = createAutopilot(only(numberRule, campaignRule));
    apart.record(fact('sent', 0, 'cmp_a'));
    apart.record(fact('sent', 0, 'cmp_a'));
    apart.record(fact('negative_reply', 0, 'cmp_a'));
    apart.record(fact('negative_reply', 0, 'cmp_a'));
    apart.record(fact('sent', 0, 'cmp_b'));
    apart.record(fact('sent', 0, 'cmp_b'));
    expect(apart.trip('cmp_a', 0)).toMatchObject({ reason: 'negative_reply_rate', scope: 'campaign', instance_id: null, figures: { negative_replies: 2 } });
    expect(apart.trip('cmp_b', 0)).toBeUndefined();
    expect(apart.trip('cmp_unknown', 0)).toBeUndefined();
  });

  it('pauses a campaign whose number is banned or logged out, and halves the limits of a warming number', () => {
    const watch = createAutopilot(only({ rate: 'block', scope: 'number', window: { sends: 200 }, min_sample: 100, limit: 0.03, max_count: 5 }));
    for (let i = 0; i < 3; i++) watch.record(fact('blocked'));
    expect(watch.trip('cmp_1', 0)).toBeUndefined();
    watch.numberHealth!('inst_1', 'warming', true);
    expect(watch.trip('cmp_1', 0)).toMatchObject({ reason: 'block_rate', figures: { blocked: 3, warming: 1 }, thresholds: { max_count: 2, limit: 0.015 } });
    watch.numberHealth!('inst_1', 'connected', false);
    expect(watch.trip('cmp_1', 0)).toBeUndefined();
    watch.numberHealth!('inst_1', 'banned', false);
    expect(watch.trip('cmp_1', 0)).toEqual({ reason: 'number_unhealthy', scope: 'number', instance_id: 'inst_1', figures: { banned: 1 }, thresholds: { banned: 1, logged_out: 1 } });
  });

  it('decides exactly what the campaign.paused payload carries, as its sample shows', () => {
    const watch = createAutopilot();
    for (let i = 0; i < 5; i++) watch.record(fact('blocked', i));
    const decision = watch.trip('cmp_1', 5)!;
    const payload: CampaignPausedPayload = { campaign_id: 'cmp_1', name: 'Spring sale', ...decision, paused_at: new Date(5).toISOString() };
    const sample = envelopeOf(sampleEvent('campaign.paused', { accountId: 'acc_1', projectId: 'prj_1' }, 'test')).payload as CampaignPausedPayload;
    expect(Object.keys(payload).sort()).toEqual(Object.keys(sample).sort());
    expect(Object.keys(decision.thresholds).sort()).toEqual(Object.keys(sample.thresholds).sort());
    expect(Object.keys(decision.figures).sort()).toEqual(Object.keys(sample.figures).sort());
  });

  it('keeps a window bounded however long a campaign runs', () => {
    const watch = createAutopilot(only(failures));
    for (let i = 0; i < 100_000; i++) watch.record(fact(i % 3 === 0 ? 'failed' : 'sent', i));
    // The last 10 sends hold 3 or 4 failures: below half.
    expect(watch.trip('cmp_1', 100_000)).toBeUndefined();
  });
});

/** A seeded generator, so a failing stream can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/**
 * Sends from one number, as the sandbox network executes them and the autopilot hears of them:
 * the index of the send after which the autopilot pauses, and the one after which the network bans.
 */
function race(sends: (i: number) => { at: number; outcome: 'sent' | 'failed' | 'blocked' }, count: number, warming = false) {
  const watch = createAutopilot();
  if (warming) watch.numberHealth!('inst_1', 'warming', true);
  const network = new BanWatch();
  let paused: number | undefined;
  let banned: number | undefined;
  for (let i = 0; i < count && banned === undefined; i++) {
    const { at, outcome } = sends(i);
    if (outcome !== 'failed' && network.sent(outcome === 'blocked', at)) banned = i;
    watch.record(fact(outcome, at));
    if (paused === undefined && watch.trip('cmp_1', at)) paused = i;
  }
  return { paused, banned };
}

describe('the autopilot against the sandbox ban rule', () => {
  const shapes = {
    'every recipient blocks from the first send': (i: number) => ({ at: i * 1_000, outcome: 'blocked' as const }),
    'recipients start blocking after 300 clean sends': (i: number) => ({ at: i * 1_000, outcome: i >= 300 && i % 3 === 0 ? ('blocked' as const) : ('sent' as const) }),
    'one block in 20 sends, a send a minute': (i: number) => ({ at: i * minute, outcome: i % 20 === 19 ? ('blocked' as const) : ('sent' as const) }),
    'one block in 30 sends, 600 sends a minute (the hour rule)': (i: number) => ({ at: i * 100, outcome: i % 30 === 29 ? ('blocked' as const) : ('sent' as const) }),
  };

  for (const [name, shape] of Object.entries(shapes)) {
    it(`pauses strictly before the ban: ${name}`, () => {
      for (const warming of [false, true]) {
        const { paused, banned } = race(shape, 50_000, warming);
        expect(banned, 'the stream gets the number banned').toBeDefined();
        expect(paused, 'the autopilot pauses').toBeDefined();
        expect(paused!).toBeLessThan(banned!);
      }
    });
  }

  it('pauses strictly before the ban on 300 random streams of blocks and failures', () => {
    let bans = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const blockShare = next() * 0.1;
      const failShare = next() * 0.2;
      const gapMs = 50 + next() * 120_000;
      let at = 0;
      const { paused, banned } = race(() => {
        at += next() * gapMs;
        const roll = next();
        return { at, outcome: roll < blockShare ? 'blocked' : roll < blockShare + failShare ? 'failed' : 'sent' };
      }, 3_000);
      if (banned === undefined) continue;
      bans++;
      expect(paused, `seed ${seed}`).toBeDefined();
      expect(paused!, `seed ${seed}`).toBeLessThan(banned);
    }
    expect(bans).toBeGreaterThan(100);
  });

  it(`keeps its number-scope block counts below the ban's ${banRule.blocks}`, () => {
    for (const rule of defaultThresholds.rates.filter((r) => r.rate === 'block' && r.scope === 'number')) expect(rule.max_count).toBeLessThan(banRule.blocks);
  });
});

describe('negative replies', () => {
  it.each(['This is SPAM', 'please stop messaging me', 'Não tenho interesse', 'déjame en paz!', 'Lasciami in pace', 'Hör auf damit', 'Arrêtez de m’écrire', 'unsubscribe me now', "Don't message me"])(
    'counts %j',
    (body) => expect(isNegativeReply(body)).toBe(true),
  );
  it.each(['STOP', 'Arrêt', 'When does the sale end?', 'Yes please, cancel my old order', 'Thanks!', 'Basta così, grazie', ''])('does not count %j', (body) =>
    expect(isNegativeReply(body)).toBe(false),
  );
});
