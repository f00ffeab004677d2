import type { Pool } from 'pg';
import { gatheredCalls } from '../../shared/serial.js';

export interface RateLimit {
  /** Tokens added per second. */
  readonly rate: number;
  /** Most tokens a bucket holds. */
  readonly burst: number;
}

/** Spec 8.1: 20 requests a second with bursts of 40, unless the plan says otherwise. */
export const defaultRateLimit: RateLimit = { rate: 20, burst: 40 };

/**
 * A token bucket per key (or per IP) kept in Postgres, so every API process draws from the same
 * bucket: one statement refills by the time elapsed, takes as many tokens as it was asked for and
 * the bucket holds, and says how many it gave. The requests of a key that arrive while its
 * statement runs are answered by the next statement together, in their order: a burst costs one
 * round trip and one row update, not one each (the row's lock made them wait on each other).
 */
export function createRateLimiter(pool: Pool) {
  const take = gatheredCalls(async (_key: string, asks: readonly { bucket: string; limit: RateLimit }[]): Promise<boolean[]> => {
    const { bucket, limit: { rate, burst } } = asks[0]!;
    const available = `LEAST($3::float8, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.refreshed_at) * $2::float8)`;
    const { rows } = await pool.query<{ granted: number }>(
      `INSERT INTO api.rate_buckets AS b (bucket, tokens, refreshed_at, granted)
       VALUES ($1, $3::float8 - LEAST($4::int, floor($3::float8)), clock_timestamp(), LEAST($4::int, floor($3::float8)))
       ON CONFLICT (bucket) DO UPDATE SET
         granted = LEAST($4::int, floor(${available})),
         tokens = ${available} - LEAST($4::int, floor(${available})),
         refreshed_at = clock_timestamp()
       RETURNING b.granted`,
      [bucket, rate, burst, asks.length],
    );
    const granted = rows[0]!.granted;
    return asks.map((_, i) => i < granted);
  });
  // Gathered by bucket and limit, so every call of one statement asks under the same limit.
  return (bucket: string, limit: RateLimit): Promise<boolean> => take(`${bucket}\u0000${limit.rate}\u0000${limit.burst}`, { bucket, limit });
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
