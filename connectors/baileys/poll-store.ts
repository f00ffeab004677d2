import type { Pool } from 'pg';

/** What decrypting a vote on a poll needs: who created it, its secret and its options. */
export interface KnownPoll {
  readonly creatorJid: string;
  readonly secret: Uint8Array;
  readonly options: readonly string[];
}

/** The polls a number sent or saw with their secret, so votes on them can be decrypted and named. */
export class PollStore {
  constructor(private readonly pool: Pool) {}

  async remember(instanceId: string, waMessageId: string, poll: KnownPoll): Promise<void> {
    await this.pool.query(
      `INSERT INTO baileys.polls (instance_id, wa_message_id, creator_jid, secret, options) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (instance_id, wa_message_id) DO NOTHING`,
      [instanceId, waMessageId, poll.creatorJid, Buffer.from(poll.secret), [...poll.options]],
    );
  }

  async find(instanceId: string, waMessageId: string): Promise<KnownPoll | undefined> {
    const { rows } = await this.pool.query<{ creator_jid: string; secret: Buffer; options: string[] }>(
      `SELECT creator_jid, secret, options FROM baileys.polls WHERE instance_id = $1 AND wa_message_id = $2`,
      [instanceId, waMessageId],
    );
    const row = rows[0];
    return row === undefined ? undefined : { creatorJid: row.creator_jid, secret: row.secret, options: row.options };
  }
}
