import { proto } from '@whiskeysockets/baileys';
import type { Pool } from 'pg';

/** How long our sends are kept to answer the network's retry requests and to tell echoes apart. */
export const SENT_KEPT_DAYS = 7;

export const sentMessagesDdl = [
  `CREATE SCHEMA IF NOT EXISTS baileys`,
  `CREATE TABLE IF NOT EXISTS baileys.sent_messages (
    instance_id text NOT NULL,
    wa_message_id text NOT NULL,
    message bytea,
    sent_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, wa_message_id)
  )`,
  `CREATE INDEX IF NOT EXISTS sent_messages_sent_at ON baileys.sent_messages (sent_at)`,
];

/**
 * The messages our sends put on the network, by number and network id. Baileys' `getMessage`
 * answers a recipient's retry request from here (the content encrypted again for the device that
 * failed), and an echo of one of our own sends is known by its id and never becomes an inbound
 * message. An OTP's code bubble is kept without its content: the code is never stored, so a retry
 * of that bubble cannot be answered and the customer asks for a new code.
 */
export class SentMessages {
  constructor(private readonly pool: Pool) {}

  async remember(instanceId: string, waMessageId: string, message: proto.IMessage | null): Promise<void> {
    const bytes = message === null ? null : Buffer.from(proto.Message.encode(message).finish());
    await this.pool.query(
      `INSERT INTO baileys.sent_messages (instance_id, wa_message_id, message) VALUES ($1, $2, $3)
       ON CONFLICT (instance_id, wa_message_id) DO UPDATE SET message = EXCLUDED.message`,
      [instanceId, waMessageId, bytes],
    );
  }

  async get(instanceId: string, waMessageId: string): Promise<proto.IMessage | undefined> {
    const { rows } = await this.pool.query<{ message: Buffer | null }>(`SELECT message FROM baileys.sent_messages WHERE instance_id = $1 AND wa_message_id = $2`, [instanceId, waMessageId]);
    const bytes = rows[0]?.message;
    return bytes == null ? undefined : proto.Message.decode(bytes);
  }

  async isOurs(instanceId: string, waMessageId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`SELECT 1 FROM baileys.sent_messages WHERE instance_id = $1 AND wa_message_id = $2`, [instanceId, waMessageId]);
    return rowCount === 1;
  }

  async purge(now = Date.now()): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM baileys.sent_messages WHERE sent_at < to_timestamp($1::double precision / 1000)`, [now - SENT_KEPT_DAYS * 86_400_000]);
    return rowCount ?? 0;
  }
}
