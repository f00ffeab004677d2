import type { Pool } from 'pg';
import { asAccountId, asInstanceId, asMessageId, asProjectId, type AccountId, type InstanceId, type MessageId, type ProjectId } from '../../schemas/ids.js';
import type { SendCommand } from '../../schemas/records.js';
import type { SendResult } from './connector.js';

/** What a status record of a send needs to know about it. */
export interface SendRef {
  readonly message_id: MessageId;
  readonly instance_id: InstanceId;
  readonly account_id: AccountId;
  readonly project_id: ProjectId;
  readonly to: string;
  readonly client_reference: string | null;
}

export interface SendOutcome {
  readonly result: SendResult;
  readonly finished_at: number;
}

/** What to do with a send command, given the sends already executed. */
export type Claim =
  | { readonly kind: 'new' }
  /** Executed before: only its status record may be missing, so it is written again (same event id). */
  | { readonly kind: 'done'; readonly outcome: SendOutcome }
  /** An earlier run claimed it and stopped before the network answered: the send may or may not have left. */
  | { readonly kind: 'interrupted' }
  /** The same message id was claimed for another number (a repeated command): that number reports it. */
  | { readonly kind: 'elsewhere' };

const DDL = [
  `CREATE SCHEMA IF NOT EXISTS connector`,
  `CREATE TABLE IF NOT EXISTS connector.executed (
    message_id text PRIMARY KEY,
    instance_id text NOT NULL,
    account_id text NOT NULL,
    project_id text NOT NULL,
    recipient text NOT NULL,
    client_reference text,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    wa_message_id text,
    error_code text,
    error_reason text,
    finished_at timestamptz
  )`,
  `CREATE INDEX IF NOT EXISTS executed_by_wa_id ON connector.executed (instance_id, wa_message_id) WHERE wa_message_id IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS executed_by_claim ON connector.executed (claimed_at)`,
];

/** Send commands live 7 days on the log; a claim older than that can no longer be repeated. */
const KEEP_DAYS = 8;

interface Row {
  instance_id: string;
  account_id: string;
  project_id: string;
  message_id: string;
  recipient: string;
  client_reference: string | null;
  wa_message_id: string | null;
  error_code: string | null;
  error_reason: string | null;
  finished_at: Date | null;
}

/**
 * The sends this connector group has executed (`connector.executed`), so each message id leaves
 * once: a send is claimed before it goes to the network and its outcome stored before its status
 * record is written. Receipts find their send here by network id.
 */
export class ExecutedSends {
  constructor(private readonly pool: Pool) {}

  async ensureSchema(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['ddl:connector']);
      for (const statement of DDL) await client.query(statement);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  async claim(command: SendCommand): Promise<Claim> {
    const inserted = await this.pool.query(
      `INSERT INTO connector.executed (message_id, instance_id, account_id, project_id, recipient, client_reference)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (message_id) DO NOTHING`,
      [command.message_id, command.instance_id, command.account_id, command.project_id, command.to, command.client_reference],
    );
    if (inserted.rowCount === 1) return { kind: 'new' };
    const { rows } = await this.pool.query<Row>('SELECT * FROM connector.executed WHERE message_id = $1', [command.message_id]);
    const row = rows[0];
    if (!row) throw new Error(`send ${command.message_id} was claimed and is gone`);
    if (row.instance_id !== command.instance_id) return { kind: 'elsewhere' };
    const outcome = outcomeOf(row);
    return outcome ? { kind: 'done', outcome } : { kind: 'interrupted' };
  }

  async finish(messageId: MessageId, result: SendResult): Promise<SendOutcome> {
    const accepted = result.kind === 'accepted';
    const { rows } = await this.pool.query<{ finished_at: Date }>(
      `UPDATE connector.executed SET wa_message_id = $2, error_code = $3, error_reason = $4, finished_at = now()
       WHERE message_id = $1 RETURNING finished_at`,
      [messageId, accepted ? result.wa_message_id : null, accepted ? null : result.error_code, accepted ? null : result.error_reason],
    );
    return { result, finished_at: rows[0]?.finished_at.getTime() ?? Date.now() };
  }

  /** The send a receipt is about; undefined for messages we did not send (the owner's own, for one). */
  async byNetworkId(instanceId: InstanceId, waMessageId: string): Promise<SendRef | undefined> {
    const { rows } = await this.pool.query<Row>(
      'SELECT * FROM connector.executed WHERE instance_id = $1 AND wa_message_id = $2',
      [instanceId, waMessageId],
    );
    return rows[0] && refOf(rows[0]);
  }

  async purge(): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM connector.executed WHERE claimed_at < now() - make_interval(days => $1)`, [KEEP_DAYS]);
    return rowCount ?? 0;
  }
}

function outcomeOf(row: Row): SendOutcome | undefined {
  if (row.finished_at === null) return undefined;
  const result: SendResult = row.wa_message_id !== null
    ? { kind: 'accepted', wa_message_id: row.wa_message_id }
    : { kind: 'failed', error_code: row.error_code ?? 'internal_error', error_reason: row.error_reason ?? '' };
  return { result, finished_at: row.finished_at.getTime() };
}

function refOf(row: Row): SendRef {
  return {
    message_id: asMessageId(row.message_id),
    instance_id: asInstanceId(row.instance_id),
    account_id: asAccountId(row.account_id),
    project_id: asProjectId(row.project_id),
    to: row.recipient,
    client_reference: row.client_reference,
  };
}
