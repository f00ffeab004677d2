import { proto } from '@whiskeysockets/baileys';
import type { Pool } from 'pg';

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
}
