import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../api/errors.js';
import { planNamed, plans } from '../../processors/usage/plans.js';
import { usageRange } from '../../api/usage/range.js';
import { periodOf } from '../../processors/usage/period.js';
import { sendUsage, storedMediaUsage } from '../../processors/usage/rows.js';
import { thresholdEvent, thresholdEventId, type Threshold } from '../../events/renderers/index.js';
import { reachedPercents, thresholdRecord } from '../../processors/usage/thresholds.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../../schemas/ids.js';
import type { SendCommand, UsageRecord } from '../../schemas/records.js';

const at = Date.UTC(2026, 0, 31, 23, 59, 59, 999);

function command(content: SendCommand['content']): SendCommand {
  return {
    event_id: asEventId('cmd_1'),
    occurred_at: at,
    account_id: asAccountId('acc_1'),
    project_id: asProjectId('prj_1'),
    instance_id: asInstanceId('inst_1'),
    message_id: asMessageId('msg_1'),
    client_reference: null,
    to: '5511999999999@s.whatsapp.net',
    origin: 'api',
    campaign_id: null,
    idempotency_key_hash: null, expires_at: null,
    quoted_message_id: null,
    mentions: [],
    content,
  };
}

function usageRecord(kind: UsageRecord['kind'], quantity: number): UsageRecord {
  return {
    event_id: asEventId('use_1'),
    occurred_at: at,
    account_id: asAccountId('acc_1'),
    project_id: asProjectId('prj_1'),
    instance_id: null,
    kind,
    quantity,
    message_id: null,
    media_id: 'media_1',
    allowance: null,
    percent: null,
    used: null,
    included: null,
    plan: null,
  };
}

const threshold: Threshold = {
  accountId: asAccountId('acc_1'),
  period: '2026-01-01',
  allowance: 'messages',
  percent: 90,
  used: 900,
  included: 1_000,
  plan: 'free',
  occurredAt: at,
};

describe('what usage counts', () => {
  it('counts a send once by its message id, an OTP as one', () => {
    expect(sendUsage(command({ kind: 'text', body: 'hi' }))).toEqual({
      event_id: 'msg_1',
      account_id: 'acc_1',
      project_id: 'prj_1',
      instance_id: 'inst_1',
      kind: 'message_sent',
      quantity: 1,
      occurred_at: at,
    });
    const otp = sendUsage(command({ kind: 'otp', code_masked: '••••12', code_ciphertext: 'x', expiry_minutes: 5, body: 'Your code' }));
    expect(otp.quantity).toBe(1);
  });

  it('counts stored media in bytes, removals negative, and nothing else from gw.usage', () => {
    expect(storedMediaUsage(usageRecord('media_stored', 2_048))).toMatchObject({ event_id: 'use_1', kind: 'media_stored', quantity: 2_048 });
    expect(storedMediaUsage(usageRecord('media_stored', -2_048))?.quantity).toBe(-2_048);
    expect(storedMediaUsage(usageRecord('threshold_reached', 0))).toBeUndefined();
    expect(storedMediaUsage(usageRecord('message_sent', 1))).toBeUndefined();
  });
});

describe('thresholds', () => {
  it('are reached at 80, 90 and 100 percent', () => {
    expect(reachedPercents(799, 1_000)).toEqual([]);
    expect(reachedPercents(800, 1_000)).toEqual([80]);
    expect(reachedPercents(999, 1_000)).toEqual([80, 90]);
    expect(reachedPercents(5_000, 1_000)).toEqual([80, 90, 100]);
    expect(reachedPercents(85_000_000, 100_000_000)).toEqual([80]);
    expect(reachedPercents(10, 0)).toEqual([]);
  });

  it('have an event id derived from account, period, allowance and percent', () => {
    const id = thresholdEventId(threshold);
    expect(id).toMatch(/^evt_[0-9a-f]{32}$/);
    const later: Threshold = { ...threshold, used: 901, occurredAt: at + 1 };
    expect(thresholdEventId(later)).toBe(id);
    expect(thresholdEventId({ ...threshold, percent: 100 })).not.toBe(id);
    expect(thresholdEventId({ ...threshold, period: '2026-02-01' })).not.toBe(id);
    expect(thresholdEventId({ ...threshold, allowance: 'media_storage' })).not.toBe(id);
    expect(thresholdEventId({ ...threshold, accountId: asAccountId('acc_2') })).not.toBe(id);
  });

  it('become an account-scope public event and a threshold_reached record with the same id', () => {
    const event = thresholdEvent(threshold);
    expect(event).toMatchObject({ event_type: 'usage.threshold', scope: 'account', account_id: 'acc_1', project_id: null, instance_id: null });
    expect(JSON.parse(event.payload_json)).toEqual({ percent: 90, used: 900, included: 1_000, plan: 'free', allowance: 'messages' });
    expect(thresholdRecord(threshold)).toMatchObject({
      event_id: event.event_id,
      kind: 'threshold_reached',
      quantity: 0,
      allowance: 'messages',
      percent: 90,
      used: 900,
      included: 1_000,
      plan: 'free',
    });
  });
});

describe('periods and ranges', () => {
  it('a period is the calendar month in UTC', () => {
    const period = periodOf(at);
    expect(period.id).toBe('2026-01-01');
    expect(period.start.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(period.end.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(periodOf(Date.UTC(2025, 11, 15)).end.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('GET /usage defaults to the current month so far, by day', () => {
    const range = usageRange({}, Date.UTC(2026, 2, 3, 12));
    expect(range).toMatchObject({ from: '2026-03-01', to: '2026-03-03', granularity: 'day', periods: ['2026-03-01', '2026-03-02', '2026-03-03'] });
    expect(range.startMs).toBe(Date.UTC(2026, 2, 1));
    expect(range.endMs).toBe(Date.UTC(2026, 2, 4));
  });

  it('months start on their first day, even inside the range', () => {
    const range = usageRange({ from: '2025-11-15', to: '2026-02-01', granularity: 'month' }, at);
    expect(range.periods).toEqual(['2025-11-01', '2025-12-01', '2026-01-01', '2026-02-01']);
    expect(range.startMs).toBe(Date.UTC(2025, 10, 15));
  });

  it('refuses a backwards or too long range', () => {
    expect(() => usageRange({ from: '2026-02-02', to: '2026-02-01' }, at)).toThrow(GatewayError);
    expect(() => usageRange({ from: '2025-01-01', to: '2026-01-02' }, at)).toThrow(/at most 366 periods/);
    expect(usageRange({ from: '2025-01-01', to: '2025-12-31' }, at).periods).toHaveLength(365);
    expect(() => usageRange({ from: '2000-01-01', to: '2026-01-01', granularity: 'month' }, at)).toThrow(/at most 120/);
  });
});

describe('plans', () => {
  it('default to Free for a missing or unknown name', () => {
    expect(planNamed(undefined)).toBe(plans.free);
    expect(planNamed('enterprise')).toBe(plans.free);
    expect(planNamed('toString')).toBe(plans.free);
    expect(planNamed('pro')).toBe(plans.pro);
  });

  it('carry the spec allowances and rate limits', () => {
    expect(plans.free).toMatchObject({ mediaStorageBytes: 100_000_000, rateLimit: { rate: 20, burst: 40 } });
    expect(plans.pro).toMatchObject({ mediaStorageBytes: 1_000_000_000, mediaStoragePerAddonBytes: 1_000_000_000 });
    expect(plans.pro.messagesPerMonth).toBeGreaterThan(plans.free.messagesPerMonth);
    expect(plans.pro.rateLimit.rate).toBeGreaterThan(plans.free.rateLimit.rate);
  });
});
