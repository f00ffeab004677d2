import type { Pool } from 'pg';
import { runDdl } from '../../shared/ddl.js';
import { gatheredCalls } from '../../shared/serial.js';
import type { Behaviour } from './behaviour.js';

const DDL = [
  `CREATE SCHEMA IF NOT EXISTS sandbox`,
  `CREATE TABLE IF NOT EXISTS sandbox.behaviours (
    instance_id text PRIMARY KEY,
    delivered_after_ms integer NOT NULL,
    read_after_ms integer NOT NULL,
    fail_to text[] NOT NULL,
    block_from text[] NOT NULL
  )`,
];

interface BehaviourRow {
  readonly instance_id: string;
  readonly delivered_after_ms: number;
  readonly read_after_ms: number;
  readonly fail_to: string[];
  readonly block_from: string[];
}

/**
 * `sandbox.behaviours`: the behaviour each number was last given (the `behaviour` control), so it
 * outlives the session that applied it. A number's session loads it when it opens, on any
 * connector, after a restart or a move, as the log's controls before it are not read again.
 */
export class SandboxBehaviours {
  /** The sessions of a partition open together: their loads go out as one statement. */
  private readonly loading = gatheredCalls((_key: string, instanceIds: readonly string[]) => this.load(instanceIds));

  constructor(private readonly pool: Pool) {}

  ensureSchema(): Promise<void> {
    return runDdl(this.pool, 'sandbox', DDL);
  }

  /** The behaviour stored for a number; undefined when it was never changed. */
  of(instanceId: string): Promise<Behaviour | undefined> {
    return this.loading('load', instanceId);
  }

  async store(instanceId: string, behaviour: Behaviour): Promise<void> {
    await this.pool.query(
      `INSERT INTO sandbox.behaviours (instance_id, delivered_after_ms, read_after_ms, fail_to, block_from) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (instance_id) DO UPDATE SET delivered_after_ms = EXCLUDED.delivered_after_ms, read_after_ms = EXCLUDED.read_after_ms,
         fail_to = EXCLUDED.fail_to, block_from = EXCLUDED.block_from`,
      [instanceId, behaviour.deliveredAfterMs, behaviour.readAfterMs, [...behaviour.failTo], [...behaviour.blockFrom]],
    );
  }

  private async load(instanceIds: readonly string[]): Promise<(Behaviour | undefined)[]> {
    const { rows } = await this.pool.query<BehaviourRow>(
      'SELECT instance_id, delivered_after_ms, read_after_ms, fail_to, block_from FROM sandbox.behaviours WHERE instance_id = ANY($1::text[])',
      [instanceIds],
    );
    const stored = new Map(rows.map((row) => [row.instance_id, row]));
    return instanceIds.map((id) => {
      const row = stored.get(id);
      return row && { deliveredAfterMs: row.delivered_after_ms, readAfterMs: row.read_after_ms, failTo: new Set(row.fail_to), blockFrom: new Set(row.block_from) };
    });
  }
}
