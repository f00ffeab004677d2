import type { Pool } from 'pg';

export interface RateLimit {
  /** Tokens added per second. */
  readonly rate: number;
  /** Most tokens a bucket holds. */
  readonly burst: number;
}

/** Spec 8.1: 20 requests a second with bursts of 40, unless the plan says otherwise. */
export const defaultRateLimit: RateLimit = { rate: 20, burst: 40 };

/** How long tokens leased from Postgres stay good in the process that leased them. */
export const LEASE_MS = 250;
/** How much of a bucket's rate a process leases ahead of its requests, in seconds of the rate. */
const AHEAD_SECONDS = 0.1;
/** How often a process deletes the buckets nobody drew from for a day (full again, as a new one starts). */
const PURGE_EVERY_MS = 60_000;

interface Waiting {
  readonly resolve: (granted: boolean) => void;
  readonly reject: (error: unknown) => void;
}

const aheadOf = ({ rate, burst }: RateLimit): number => Math.min(burst, Math.max(1, Math.ceil(rate * AHEAD_SECONDS)));

interface LocalBucket {
  readonly limit: RateLimit;
  /** Tokens leased and not yet given, good until `goodUntil`. */
  tokens: number;
  goodUntil: number;
  /** Requests waiting for a lease, first come first served. */
  readonly waiting: Waiting[];
  leasing: boolean;
}

/**
 * A token bucket per key (or per IP) kept in Postgres, so every API process draws from the same
 * bucket, with the tokens leased into each process ahead of its requests: a request that finds a
 * leased token is answered without a round trip, and one statement leases the tokens of the
 * requests waiting plus a tenth of a second of the bucket's rate. One lease per bucket is in
 * flight at a time; the requests that arrive meanwhile wait for the next, in their order.
 *
 * Leased tokens are taken from the shared bucket, so the processes together never give more than
 * it holds. A process holds at most a tenth of a second of the rate beyond the requests it has
 * waiting, and drops what it has not given `LEASE_MS` after its last lease (spent, never
 * returned): a key whose traffic moves to another process loses that much, never more.
 */
export function createRateLimiter(pool: Pool, now: () => number = Date.now) {
  const buckets = new Map<string, LocalBucket>();
  let sweptAt = now();
  let purgedAt = Number.NEGATIVE_INFINITY;

  /** Every key and every caller's IP has a row: without this the table grows with each one ever seen. */
  const purgeIdle = (at: number): void => {
    if (at - purgedAt < PURGE_EVERY_MS) return;
    purgedAt = at;
    pool.query(`DELETE FROM api.rate_buckets WHERE refreshed_at < clock_timestamp() - interval '1 day'`).catch(() => (purgedAt = Number.NEGATIVE_INFINITY));
  };

  const lease = async (bucket: string, limit: RateLimit, count: number): Promise<number> => {
    purgeIdle(now());
    const { rate, burst } = limit;
    const available = `LEAST($3::float8, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.refreshed_at) * $2::float8)`;
    const { rows } = await pool.query<{ granted: number }>(
      `INSERT INTO api.rate_buckets AS b (bucket, tokens, refreshed_at, granted)
       VALUES ($1, $3::float8 - LEAST($4::int, floor($3::float8)), clock_timestamp(), LEAST($4::int, floor($3::float8)))
       ON CONFLICT (bucket) DO UPDATE SET
         granted = LEAST($4::int, floor(${available})),
         tokens = ${available} - LEAST($4::int, floor(${available})),
         refreshed_at = clock_timestamp()
       RETURNING b.granted`,
      [bucket, rate, burst, count],
    );
    return rows[0]!.granted;
  };

  /** Leases until no request waits; a failed lease fails the requests waiting on it (none, ahead of them). */
  const refill = async (bucket: string, local: LocalBucket): Promise<void> => {
    if (local.leasing) return;
    local.leasing = true;
    const ahead = aheadOf(local.limit);
    try {
      do {
        const asked = local.waiting.length;
        const granted = await lease(bucket, local.limit, asked + ahead);
        const at = now();
        if (local.goodUntil <= at) local.tokens = 0;
        local.tokens += granted;
        local.goodUntil = at + LEASE_MS;
        let served = 0;
        while (local.waiting.length > 0 && local.tokens >= 1) {
          local.waiting.shift()!.resolve(true);
          local.tokens -= 1;
          served += 1;
        }
        // The bucket was asked for these and had no token left: they are refused, in their order.
        for (let i = served; i < asked; i++) local.waiting.shift()!.resolve(false);
      } while (local.waiting.length > 0);
    } catch (error) {
      for (const { reject } of local.waiting.splice(0)) reject(error);
    } finally {
      local.leasing = false;
    }
  };

  const sweep = (at: number): void => {
    if (at - sweptAt < LEASE_MS * 4) return;
    sweptAt = at;
    for (const [key, local] of buckets) {
      if (!local.leasing && local.waiting.length === 0 && local.goodUntil <= at) buckets.delete(key);
    }
  };

  // Buckets are kept by bucket and limit, so a plan change starts a lease under the new limit.
  return (bucket: string, limit: RateLimit): Promise<boolean> => {
    const at = now();
    sweep(at);
    const key = `${bucket}\u0000${limit.rate}\u0000${limit.burst}`;
    let local = buckets.get(key);
    if (!local) buckets.set(key, (local = { limit, tokens: 0, goodUntil: 0, waiting: [], leasing: false }));
    if (local.goodUntil <= at) local.tokens = 0;
    if (local.waiting.length === 0 && local.tokens >= 1) {
      local.tokens -= 1;
      // Leasing before the tokens run out keeps the requests off the round trip.
      if (local.tokens < aheadOf(limit) / 2) void refill(bucket, local);
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve, reject) => {
      local.waiting.push({ resolve, reject });
      void refill(bucket, local);
    });
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
