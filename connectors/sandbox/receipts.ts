import type { Pool } from 'pg';
import { runDdl } from '../../shared/ddl.js';
import { gatheredCalls, KeyedSerial } from '../../shared/serial.js';

/** A receipt the simulated network owes for an accepted send, as the real network keeps it server-side. */
export interface OwedReceipt {
  readonly instance_id: string;
  readonly wa_message_id: string;
  readonly status: 'delivered' | 'read';
  /** When it reaches the number (ms since the epoch). */
  readonly due_at: number;
  /** When the send was accepted: a session reloads the receipts of sends made before it opened. */
  readonly sent_at: number;
}

/** A row of `sandbox.pending_receipts` (bigint columns come as text). */
type OwedRow = Omit<OwedReceipt, 'due_at' | 'sent_at'> & { readonly due_at: string; readonly sent_at: string };

const receiptOf = (row: OwedRow): OwedReceipt => ({ ...row, due_at: Number(row.due_at), sent_at: Number(row.sent_at) });

/** One send as the simulated network takes it: its bubbles' network ids and the receipts it then owes. */
export interface NetworkSend {
  readonly instance_id: string;
  readonly wa_message_ids: readonly string[];
  readonly receipts: readonly OwedReceipt[];
  readonly sent_at: number;
}

/**
 * Unlogged: a write needs no WAL flush, so a send waits a round trip and no disk for its receipts.
 * The rows survive a connector that dies; a Postgres crash empties the table (the simulated network
 * then forgets, a cost the sandbox can take).
 */
const DDL = [
  `CREATE SCHEMA IF NOT EXISTS sandbox`,
  `CREATE UNLOGGED TABLE IF NOT EXISTS sandbox.pending_receipts (
    instance_id text NOT NULL,
    wa_message_id text NOT NULL,
    status text NOT NULL,
    due_at bigint NOT NULL,
    sent_at bigint NOT NULL,
    PRIMARY KEY (instance_id, wa_message_id, status)
  )`,
  `CREATE UNLOGGED TABLE IF NOT EXISTS sandbox.network_messages (
    instance_id text NOT NULL,
    wa_message_id text NOT NULL,
    sent_at bigint NOT NULL,
    PRIMARY KEY (instance_id, wa_message_id)
  )`,
  `CREATE INDEX IF NOT EXISTS pending_receipts_by_due ON sandbox.pending_receipts (instance_id, due_at, wa_message_id, status)`,
];

/**
 * Receipts of numbers that never came back (deleted, logged out) are forgotten after this long, and
 * so are the messages taken: send commands live 7 days on the log, so none comes again later.
 */
const KEEP_MS = 8 * 86_400_000;

/**
 * `sandbox.network_messages` and `sandbox.pending_receipts`: the messages the sandbox network took,
 * one per network id as the real network keeps them, and the receipts it owes for them. Both are
 * written before a send is accepted; a receipt is removed once it is on the log, so a connector
 * killed in between owes it still when the number's session opens again. Concurrent writes are
 * gathered into one statement.
 */
export class PendingReceipts {
  /** One insert and one delete statement at a time; what callers add meanwhile goes into the next one. */
  private readonly statements = new KeyedSerial();
  private readonly taking = gatheredCalls((_key: string, sends: readonly NetworkSend[]) => this.insert(sends));

  constructor(private readonly pool: Pool) {}

  async ensureSchema(): Promise<void> {
    await runDdl(this.pool, 'sandbox', DDL);
    await this.pool.query('DELETE FROM sandbox.pending_receipts WHERE due_at < $1', [Date.now() - KEEP_MS]);
    await this.pool.query('DELETE FROM sandbox.network_messages WHERE sent_at < $1', [Date.now() - KEEP_MS]);
  }

  /**
   * Takes a send onto the network and stores the receipts it owes. Resolves with false when the
   * network had taken its ids before (a send repeated after a crash): nothing new is owed then.
   */
  take(send: NetworkSend): Promise<boolean> {
    return this.taking('insert', send);
  }

  /** Resolves once the receipts are no longer owed. */
  settle(receipts: readonly OwedReceipt[]): Promise<void> {
    return this.statements.gather('delete', this.delete, receipts);
  }

  /** Up to `limit` receipts of a number owed for sends before `sentBefore`, in due order, after `after`. */
  async owed(instanceId: string, sentBefore: number, after: OwedReceipt | undefined, limit: number): Promise<OwedReceipt[]> {
    const { rows } = await this.pool.query<OwedRow>(
      `SELECT instance_id, wa_message_id, status, due_at, sent_at FROM sandbox.pending_receipts
       WHERE instance_id = $1 AND sent_at < $2 AND (due_at, wa_message_id, status) > ($3, $4, $5)
       ORDER BY due_at, wa_message_id, status LIMIT $6`,
      [instanceId, sentBefore, after?.due_at ?? -1, after?.wa_message_id ?? '', after?.status ?? '', limit],
    );
    return rows.map(receiptOf);
  }

  /** Up to `limit` receipts owed to any of `instanceIds` that fell due before `dueBefore`, oldest first. */
  async overdue(instanceIds: readonly string[], dueBefore: number, limit: number): Promise<OwedReceipt[]> {
    const { rows } = await this.pool.query<OwedRow>(
      `SELECT instance_id, wa_message_id, status, due_at, sent_at FROM sandbox.pending_receipts
       WHERE instance_id = ANY($1::text[]) AND due_at < $2 ORDER BY due_at LIMIT $3`,
      [instanceIds, dueBefore, limit],
    );
    return rows.map(receiptOf);
  }

  private async insert(sends: readonly NetworkSend[]): Promise<boolean[]> {
    const messages = sends.flatMap((send) => send.wa_message_ids.map((id) => ({ instance: send.instance_id, id, at: send.sent_at })));
    const receipts = sends.flatMap((send) => send.receipts);
    const { rows } = await this.pool.query<{ instance_id: string; wa_message_id: string }>(
      `WITH taken AS (
         INSERT INTO sandbox.network_messages (instance_id, wa_message_id, sent_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
         ON CONFLICT DO NOTHING
         RETURNING instance_id, wa_message_id
       ), owed AS (
         INSERT INTO sandbox.pending_receipts (instance_id, wa_message_id, status, due_at, sent_at)
         SELECT r.* FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[]) AS r(instance_id, wa_message_id, status, due_at, sent_at)
         JOIN taken USING (instance_id, wa_message_id)
         ON CONFLICT DO NOTHING
       )
       SELECT instance_id, wa_message_id FROM taken`,
      [
        messages.map((m) => m.instance),
        messages.map((m) => m.id),
        messages.map((m) => m.at),
        receipts.map((r) => r.instance_id),
        receipts.map((r) => r.wa_message_id),
        receipts.map((r) => r.status),
        receipts.map((r) => r.due_at),
        receipts.map((r) => r.sent_at),
      ],
    );
    const taken = new Set(rows.map((row) => `${row.instance_id}\u0000${row.wa_message_id}`));
    return sends.map((send) => taken.has(`${send.instance_id}\u0000${send.wa_message_ids[0]}`));
  }

  private readonly delete = async (batches: readonly (readonly OwedReceipt[])[]): Promise<void> => {
    const rows = batches.flat();
    await this.pool.query(
      `DELETE FROM sandbox.pending_receipts p USING unnest($1::text[], $2::text[], $3::text[]) AS s(instance_id, wa_message_id, status)
       WHERE p.instance_id = s.instance_id AND p.wa_message_id = s.wa_message_id AND p.status = s.status`,
      [rows.map((r) => r.instance_id), rows.map((r) => r.wa_message_id), rows.map((r) => r.status)],
    );
  };
}
