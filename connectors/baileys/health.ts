/**
 * The health score of a number (0-100, docs/baileys.md#health): 100 is healthy. Each fact moves it
 * by the points below; a successful send earns back a point. These are data, not a model: they
 * make a number that fails, is blocked or keeps dropping sink, and one that works climb back.
 */
export const HEALTH_POINTS = {
  sent: +1,
  failed: -3,
  /** The network refused the send because the recipient blocked the number or reported it. */
  blocked: -10,
  disconnected: -5,
} as const;

export type HealthFact = keyof typeof HEALTH_POINTS;

export function nextHealth(score: number, fact: HealthFact): number {
  return Math.min(100, Math.max(0, score + HEALTH_POINTS[fact]));
}
