import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { runDdl } from '../../shared/ddl.js';

/**
 * The Baileys connector's tables in Postgres, and the purge of what is kept for a time. Nothing
 * here loads Baileys: a connector worker creates the tables and purges them when it starts, and
 * loads Baileys' modules only when it first opens a number on it (stack/connector-role.ts).
 */

/** How long our sends are kept to answer the network's retry requests and to tell echoes apart. */
export const SENT_KEPT_DAYS = 7;
/** Votes come long after a poll; a poll is kept this long to decrypt them. */
export const POLLS_KEPT_DAYS = 90;
const PURGE_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

export const baileysDdl: readonly string[] = [
  `CREATE SCHEMA IF NOT EXISTS baileys`,
  // The auth state of each number (auth-store.ts), and the generation of the socket that may write it.
  `CREATE TABLE IF NOT EXISTS baileys.creds (
    instance_id text PRIMARY KEY,
    creds text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE IF NOT EXISTS baileys.keys (
    instance_id text NOT NULL,
    type text NOT NULL,
    id text NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (instance_id, type, id)
  )`,
  `CREATE TABLE IF NOT EXISTS baileys.auth_writers (
    instance_id text PRIMARY KEY,
    generation bigint NOT NULL
  )`,
  // Which worker holds each number's socket (lease.ts).
  `CREATE TABLE IF NOT EXISTS baileys.leases (
    instance_id text PRIMARY KEY,
    owner text NOT NULL,
    generation bigint NOT NULL,
    expires_at timestamptz NOT NULL
  )`,
  `ALTER TABLE baileys.leases ADD COLUMN IF NOT EXISTS fence text`,
  `CREATE INDEX IF NOT EXISTS leases_fence ON baileys.leases (fence)`,
  // When each number first connected (first-connections.ts).
  `CREATE TABLE IF NOT EXISTS baileys.first_connections (
    instance_id text PRIMARY KEY,
    connected_at timestamptz NOT NULL
  )`,
  // Our sends (sent-messages.ts) and polls (poll-store.ts), kept for their days.
  `CREATE TABLE IF NOT EXISTS baileys.sent_messages (
    instance_id text NOT NULL,
    wa_message_id text NOT NULL,
    message bytea,
    sent_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, wa_message_id)
  )`,
  `CREATE INDEX IF NOT EXISTS sent_messages_sent_at ON baileys.sent_messages (sent_at)`,
  `CREATE TABLE IF NOT EXISTS baileys.polls (
    instance_id text NOT NULL,
    wa_message_id text NOT NULL,
    creator_jid text NOT NULL,
    secret bytea NOT NULL,
    options text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, wa_message_id)
  )`,
  `CREATE INDEX IF NOT EXISTS polls_created_at ON baileys.polls (created_at)`,
];

/** Drops our sends kept past `SENT_KEPT_DAYS`; the number of rows dropped. */
export async function purgeSentMessages(pool: Pool, now = Date.now()): Promise<number> {
  const { rowCount } = await pool.query(`DELETE FROM baileys.sent_messages WHERE sent_at < to_timestamp($1::double precision / 1000)`, [now - SENT_KEPT_DAYS * DAY_MS]);
  return rowCount ?? 0;
}

/** Drops the polls kept past `POLLS_KEPT_DAYS`; the number of rows dropped. */
export async function purgePolls(pool: Pool, now = Date.now()): Promise<number> {
  const { rowCount } = await pool.query(`DELETE FROM baileys.polls WHERE created_at < to_timestamp($1::double precision / 1000)`, [now - POLLS_KEPT_DAYS * DAY_MS]);
  return rowCount ?? 0;
}

/** Creates the tables, and purges what is kept past its time now and every hour after. */
export async function prepareBaileysTables(pool: Pool, logger: Logger): Promise<void> {
  await runDdl(pool, 'baileys', baileysDdl);
  const purge = async () => {
    try {
      await purgeSentMessages(pool);
      await purgePolls(pool);
    } catch (err) {
      logger.warn({ err }, 'purging sent messages and polls failed');
    }
  };
  await purge();
  setInterval(() => void purge(), PURGE_EVERY_MS).unref();
}
