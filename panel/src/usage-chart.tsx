import { formatDay, formatNumber, t } from './i18n.js';

export interface UsagePoint {
  readonly period_start: string;
  readonly messages: number;
}

export const DAY_MS = 86_400_000;
const WIDTH = 640;
const HEIGHT = 220;
const PLOT = { left: 44, right: 8, top: 10, bottom: 28 } as const;

/** The first of the last 30 days (UTC), as `GET /usage` and the platform's partner usage take it. */
export const thirtyDaysAgo = () => new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10);

/** Messages per day as bars on dated axes: the account's usage and a partner's draw the same. */
export function UsageChart({ points }: { points: readonly UsagePoint[] }) {
  const total = points.reduce((sum, p) => sum + p.messages, 0);
  const top = niceCeiling(Math.max(1, ...points.map((p) => p.messages)));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / Math.max(1, points.length);
  const y = (value: number) => PLOT.top + plotHeight - (value / top) * plotHeight;
  return (
    <>
      <p>{t('last30Days')} <strong data-total={total}>{formatNumber(total)}</strong></p>
      <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={t('chartLabel', { total: formatNumber(total) })}>
        {(top % 2 === 0 ? [0, top / 2, top] : [0, top]).map((tick) => (
          <g key={tick} class="axis">
            <line x1={PLOT.left} x2={WIDTH - PLOT.right} y1={y(tick)} y2={y(tick)} />
            <text x={PLOT.left - 6} y={y(tick) + 4} text-anchor="end">{formatNumber(tick)}</text>
          </g>
        ))}
        {points.map((p, i) => {
          const height = (p.messages / top) * plotHeight;
          return <rect key={p.period_start} x={PLOT.left + i * slot + 1} y={PLOT.top + plotHeight - height} width={Math.max(1, slot - 2)} height={height} data-day={p.period_start} data-messages={p.messages}><title>{`${formatDay(p.period_start)}: ${formatNumber(p.messages)}`}</title></rect>;
        })}
        {points.map((p, i) => (i % 7 === 0 || i === points.length - 1) && (
          <text key={`label-${p.period_start}`} class="axis" x={PLOT.left + i * slot + slot / 2} y={HEIGHT - 8} text-anchor="middle" data-axis-day={p.period_start}>{formatDay(p.period_start)}</text>
        ))}
      </svg>
    </>
  );
}

/** The smallest of 1, 2 or 5 times a power of ten at or above `value`: round figures on the axis. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= value) ?? value);
}
