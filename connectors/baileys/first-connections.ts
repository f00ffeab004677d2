import type { Pool } from 'pg';

/** When each number first connected: its warming counts from there, across restarts and workers. */
export class FirstConnections {
  constructor(private readonly pool: Pool) {}

  async get(instanceId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ connected_at: Date }>(`SELECT connected_at FROM baileys.first_connections WHERE instance_id = $1`, [instanceId]);
    return rows[0]?.connected_at.getTime();
  }

  /** Records `at` unless an earlier time is there; answers the time kept. */
  async set(instanceId: string, at: number): Promise<number> {
    const { rows } = await this.pool.query<{ connected_at: Date }>(
      `INSERT INTO baileys.first_connections (instance_id, connected_at) VALUES ($1, to_timestamp($2::double precision / 1000))
       ON CONFLICT (instance_id) DO UPDATE SET connected_at = baileys.first_connections.connected_at
       RETURNING connected_at`,
      [instanceId, at],
    );
    return rows[0]!.connected_at.getTime();
  }
}
