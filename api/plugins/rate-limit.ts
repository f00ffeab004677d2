import type { Pool } from 'pg';

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
 * bucket: one statement refills by the time elapsed, takes a token if there is one, and says
 * whether it did. Correct under any number of processes, at the cost of one round trip.
 */
export function createRateLimiter(pool: Pool) {
  return async function take(bucket: string, limit: RateLimit): Promise<boolean> {
    const { rowCount } = await pool.query(
      `INSERT INTO api.rate_buckets AS b (bucket, tokens, refreshed_at) VALUES ($1, $3::float8 - 1, clock_timestamp())
       ON CONFLICT (bucket) DO UPDATE SET
         tokens = LEAST($3::float8, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.refreshed_at) * $2::float8) - 1,
         refreshed_at = clock_timestamp()
       WHERE LEAST($3::float8, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.refreshed_at) * $2::float8) >= 1`,
      [bucket, limit.rate, limit.burst],
    );
    return rowCount === 1;
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
