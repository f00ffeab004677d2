import { describe, expect, it } from 'vitest';
import { afterClose } from '../../connectors/baileys/close-reasons.js';
import { HEALTH_POINTS, nextHealth } from '../../connectors/baileys/health.js';
import { isWarming, WARMING_SCHEDULE, WarmingGate, warmingRate } from '../../connectors/baileys/warming.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('warming, health and close reasons of Baileys numbers', () => {
  it('ramps the send rate by the schedule and stops warming on its last day', () => {
    expect(WARMING_SCHEDULE.map(([day]) => warmingRate(day * DAY))).toEqual(WARMING_SCHEDULE.map(([, perHour]) => perHour));
    expect(warmingRate(0.5 * DAY)).toBe(20);
    expect(warmingRate(4 * DAY)).toBe(80);
    expect(isWarming(0, 6.9 * DAY)).toBe(true);
    expect(isWarming(0, 7 * DAY)).toBe(false);
  });

  it('spaces the sends of a warming number in call order, and lets a warmed one send at once', () => {
    let now = 10 * HOUR;
    const gate = new WarmingGate(() => now, () => now);
    // Day 0: 20 an hour, one every 3 minutes.
    expect([gate.take(), gate.take(), gate.take()]).toEqual([0, 180_000, 360_000]);
    now += 360_000;
    expect(gate.take()).toBe(180_000);
    const warmed = new WarmingGate(() => 0, () => 8 * DAY);
    expect([warmed.take(), warmed.take()]).toEqual([0, 0]);
    expect(new WarmingGate(() => undefined).take()).toBe(0);
  });

  it('moves the health score by the documented points, within 0 and 100', () => {
    expect(nextHealth(100, 'sent')).toBe(100);
    expect(nextHealth(100, 'failed')).toBe(100 + HEALTH_POINTS.failed);
    expect(nextHealth(5, 'blocked')).toBe(0);
    expect(nextHealth(50, 'disconnected')).toBe(45);
  });

  it('stops on logged out (dropping the auth state) and banned; retries replaced slowly; restarts at once only after pairing; backs off otherwise', () => {
    expect(afterClose(401, false)).toMatchObject({ kind: 'stop', status: 'logged_out', dropAuth: true });
    expect(afterClose(403, false)).toMatchObject({ kind: 'stop', status: 'banned', dropAuth: false });
    expect(afterClose(440, false)).toMatchObject({ kind: 'reconnect', status: 'disconnected', at: 'slow' });
    expect(afterClose(440, false).reason).toMatch(/took over; retrying slowly/);
    expect(afterClose(515, true)).toMatchObject({ kind: 'reconnect', at: 'once' });
    expect(afterClose(515, false)).toMatchObject({ kind: 'reconnect', status: 'disconnected', at: 'backoff' });
    for (const code of [408, 411, 428, 500, 503, undefined]) expect(afterClose(code, false)).toMatchObject({ kind: 'reconnect', status: 'disconnected', at: 'backoff' });
  });});
