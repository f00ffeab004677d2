import type { Pool } from 'pg';
import { runDdl } from '../shared/ddl.js';
import { sessionsDdl } from './connect/sessions.js';
import { emailCodesDdl } from './email-codes.js';
import { panelSessionsDdl } from './panel/sessions.js';
import { paymentsDdl } from '../connectors/payments/attempts.js';
import { testClocksDdl } from '../connectors/payments/test-clocks.js';
import { connectCodesDdl } from './partner/connect-codes.js';

/**
 * Tables the API itself keeps (not projections of the log): rate-limit buckets shared by every
 * API process, idempotency keys, and the short-lived Connect secrets (session tokens, connect
 * codes), kept only as hashes. They live in the `api` schema and are created at start.
 */
const ddl = [
  `CREATE SCHEMA IF NOT EXISTS api`,
  // UNLOGGED: losing buckets in a crash only forgives a second of traffic.
  `CREATE UNLOGGED TABLE IF NOT EXISTS api.rate_buckets (
    bucket text PRIMARY KEY,
    tokens double precision NOT NULL,
    refreshed_at timestamptz NOT NULL
  )`,
  // How many tokens the bucket's last statement gave out: the requests it answered learn it from RETURNING.
  `ALTER TABLE api.rate_buckets ADD COLUMN IF NOT EXISTS granted integer NOT NULL DEFAULT 0`,
  `CREATE TABLE IF NOT EXISTS api.idempotency_keys (
    account_id text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    state text NOT NULL,
    status_code integer,
    response jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, key)
  )`,
  `CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON api.idempotency_keys (created_at)`,
  // When the key's current 24 hours began (its message id derives from it); null on keys claimed before it was kept.
  `ALTER TABLE api.idempotency_keys ADD COLUMN IF NOT EXISTS window_started_at timestamptz`,
  ...sessionsDdl,
  ...connectCodesDdl,
  ...emailCodesDdl,
  ...paymentsDdl,
  ...testClocksDdl,
  ...panelSessionsDdl,
];

export async function ensureApiTables(pool: Pool): Promise<void> {
  await runDdl(pool, 'api', ddl);
}
