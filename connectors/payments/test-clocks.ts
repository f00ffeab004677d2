import type { Pool } from 'pg';
import type { AccountId } from '../../schemas/ids.js';

/**
 * The sandbox's test clocks, one per account, as a Stripe customer sits on a test clock: how far the
 * account's subscription time runs ahead of real time. Sandbox state, like the processor's own
 * (no payment fact: the renewals the clock passes are the facts, on `gw.payments`).
 */
export const testClocksDdl = [
  `CREATE TABLE IF NOT EXISTS api.sandbox_test_clocks (
    account_id text PRIMARY KEY,
    advanced_ms bigint NOT NULL
  )`,
];

export class TestClocks {
  constructor(private readonly pool: Pool) {}

  /** The account's time at real time `now`. */
  async timeOf(accountId: AccountId, now: number): Promise<number> {
    const { rows } = await this.pool.query<{ advanced_ms: string }>(`SELECT advanced_ms FROM api.sandbox_test_clocks WHERE account_id = $1`, [accountId]);
    return now + Number(rows[0]?.advanced_ms ?? 0);
  }

  /** Moves the account's clock forward by `ms`; its time afterwards. */
  async advance(accountId: AccountId, ms: number, now: number): Promise<number> {
    const { rows } = await this.pool.query<{ advanced_ms: string }>(
      `INSERT INTO api.sandbox_test_clocks (account_id, advanced_ms) VALUES ($1, $2)
       ON CONFLICT (account_id) DO UPDATE SET advanced_ms = api.sandbox_test_clocks.advanced_ms + EXCLUDED.advanced_ms
       RETURNING advanced_ms`,
      [accountId, ms],
    );
    return now + Number(rows[0]!.advanced_ms);
  }
}
