import pg, { type Pool, type PoolClient } from 'pg';
import type { Logger } from 'pino';

/** The right of one worker to hold the socket of one number, until `validUntil` on this process' clock. */
export interface Lease {
  readonly instanceId: string;
  readonly owner: string;
  /** Grows by one at every acquisition: a write fenced by an older generation is refused. */
  readonly generation: number;
  /** The holder process's fence token when it took the lease (shared/process-fence.ts), if it runs one. */
  readonly fence: string | undefined;
  /** `performance.now()` past which the holder must have closed its socket unless it renewed. */
  validUntil: number;
}

/** A write of a worker whose lease on the number has moved on. */
export class LeaseLost extends Error {
  constructor(readonly instanceId: string) {
    super(`the lease on ${instanceId} is held by another worker`);
  }
}

/**
 * The leases' own small pool: a renewal never waits behind message traffic for a connection, and a
 * renewal held by a lock or a slow database gives up within one period (the next one tries again).
 */
export function leasePool(connectionString: string, periodMs: number, logger: Logger): Pool {
  const pool = new pg.Pool({ connectionString, max: 2, connectionTimeoutMillis: periodMs, statement_timeout: periodMs });
  pool.on('error', (err) => logger.warn({ err }, 'idle Postgres client of the leases failed'));
  return pool;
}

/**
 * Leases on numbers in Postgres: at most one worker holds a number's socket at a time, even while
 * partitions move. A worker takes a lease only when it is free (released, or expired on the
 * database's clock); the holder renews it and closes its socket by itself once it could not renew
 * within the time to live, measured from before it asked, so its socket is closed before anyone
 * else can take the lease. A lease taken under a process fence ends early when a peer finds that
 * process dead (`expireFenced`).
 */
export class NumberLeases {
  constructor(
    private readonly pool: Pool,
    private readonly ttlMs: number,
  ) {}

  /** The lease, if no other worker holds it now; taken under the holder's `fence` token, if any. */
  async acquire(instanceId: string, owner: string, fence?: string): Promise<Lease | undefined> {
    const asked = performance.now();
    const { rows } = await this.pool.query<{ generation: string }>(
      `INSERT INTO baileys.leases AS l (instance_id, owner, generation, expires_at, fence)
       VALUES ($1, $2, 1, now() + make_interval(secs => $3::double precision / 1000), $4)
       ON CONFLICT (instance_id) DO UPDATE
         SET owner = EXCLUDED.owner, generation = l.generation + 1, expires_at = EXCLUDED.expires_at, fence = EXCLUDED.fence
         WHERE l.expires_at <= now()
       RETURNING generation`,
      [instanceId, owner, this.ttlMs, fence ?? null],
    );
    const row = rows[0];
    return row === undefined ? undefined : { instanceId, owner, generation: Number(row.generation), fence, validUntil: asked + this.ttlMs };
  }

  /** Extends the lease; false once another worker holds it (or held it since). */
  async renew(lease: Lease): Promise<boolean> {
    const asked = performance.now();
    const { rowCount } = await this.pool.query(
      `UPDATE baileys.leases SET expires_at = now() + make_interval(secs => $3::double precision / 1000)
       WHERE instance_id = $1 AND generation = $2 AND expires_at > now()`,
      [lease.instanceId, lease.generation, this.ttlMs],
    );
    if (rowCount !== 1) return false;
    lease.validUntil = asked + this.ttlMs;
    return true;
  }

  /** Frees the lease at once, for the next owner; only after the socket is closed. */
  async release(lease: Lease): Promise<void> {
    await this.pool.query(`UPDATE baileys.leases SET expires_at = now() WHERE instance_id = $1 AND generation = $2`, [lease.instanceId, lease.generation]);
  }

  /** Inside a transaction: refuses (LeaseLost) unless `lease` is still the number's, and holds it until commit. */
  static async fence(client: PoolClient, lease: Pick<Lease, 'instanceId' | 'generation'>): Promise<void> {
    const { rowCount } = await client.query(`SELECT 1 FROM baileys.leases WHERE instance_id = $1 AND generation = $2 FOR SHARE`, [lease.instanceId, lease.generation]);
    if (rowCount !== 1) throw new LeaseLost(lease.instanceId);
  }
}

/**
 * Ends, `withinMs` from now unless sooner, the leases taken under these fences: their holders died,
 * or let go of the sockets within that time. Run by whichever process found them dead, which may
 * have no Baileys connector, nor the table (then there is nothing to end).
 */
export async function expireFenced(pool: Pool, fences: readonly string[], withinMs: number): Promise<void> {
  try {
    await pool.query(
      `UPDATE baileys.leases SET expires_at = LEAST(expires_at, now() + make_interval(secs => $2::double precision / 1000)) WHERE fence = ANY($1)`,
      [fences, withinMs],
    );
  } catch (err) {
    if ((err as { code?: string }).code !== UNDEFINED_TABLE) throw err;
  }
}

const UNDEFINED_TABLE = '42P01';
