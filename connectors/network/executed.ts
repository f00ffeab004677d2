import type { Pool } from 'pg';
import { asAccountId, asInstanceId, asMessageId, asProjectId, type AccountId, type InstanceId, type MessageId, type ProjectId } from '../../schemas/ids.js';
import type { SendCommand } from '../../schemas/records.js';
import type { SendResult } from './connector.js';
import { runDdl } from '../../shared/ddl.js';

/** What a status record of a send needs to know about it. */
export interface SendRef {
  readonly message_id: MessageId;
  readonly instance_id: InstanceId;
  readonly account_id: AccountId;
  readonly project_id: ProjectId;
  readonly to: string;
  readonly client_reference: string | null;
  readonly campaign_id: string | null;
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
  /**
   * An earlier run claimed it and stopped before its outcome was stored: the send may or may not
   * have left, so it goes again under the same network ids (the network keeps one message per id).
   */
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
    campaign_id text,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    wa_message_id text,
    error_code text,
    error_reason text,
    finished_at timestamptz
  )`,
  `ALTER TABLE connector.executed ADD COLUMN IF NOT EXISTS campaign_id text`,
  `CREATE INDEX IF NOT EXISTS executed_by_wa_id ON connector.executed (instance_id, wa_message_id) WHERE wa_message_id IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS executed_by_claim ON connector.executed (claimed_at)`,
  `CREATE INDEX IF NOT EXISTS executed_unfinished ON connector.executed (instance_id, claimed_at) WHERE finished_at IS NULL`,
];

/** Send commands live 7 days on the log; a claim older than that can no longer be repeated. */
const KEEP_DAYS = 8;

/**
 * Sends remembered by network id, so the receipts that follow them soon need no query: 100 s of
 * sends at 100/s, about 4 MB. A receipt for an older send (a read hours later) costs one indexed query.
 */
export const RECENT_SENDS = 10_000;

interface Row {
  instance_id: string;
  account_id: string;
  project_id: string;
  message_id: string;
  recipient: string;
  client_reference: string | null;
  campaign_id: string | null;
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
  /** Accepted sends whose outcome is stored, by instance and network id, oldest first. */
  private readonly recent = new Map<string, SendRef>();

  constructor(private readonly pool: Pool) {}

  async ensureSchema(): Promise<void> {
    await runDdl(this.pool, 'connector', DDL);
  }

  /**
   * Claims sends in one statement, and tells for each what to do. A message id repeated within
   * `commands` is claimed by its first command only: give each message id once.
   */
  async claim(commands: readonly SendCommand[]): Promise<Claim[]> {
    const { rows: inserted } = await this.pool.query<{ message_id: string }>(
      `INSERT INTO connector.executed (message_id, instance_id, account_id, project_id, recipient, client_reference, campaign_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
       ON CONFLICT (message_id) DO NOTHING
       RETURNING message_id`,
      [
        commands.map((c) => c.message_id),
        commands.map((c) => c.instance_id),
        commands.map((c) => c.account_id),
        commands.map((c) => c.project_id),
        commands.map((c) => c.to),
        commands.map((c) => c.client_reference),
        commands.map((c) => c.campaign_id),
      ],
    );
    const fresh = new Set(inserted.map((row) => row.message_id));
    const seen = await this.rows(commands.map((c) => c.message_id).filter((id) => !fresh.has(id)));
    return commands.map((command) => {
      if (fresh.has(command.message_id)) return { kind: 'new' };
      const row = seen.get(command.message_id);
      if (!row) throw new Error(`send ${command.message_id} was claimed and is gone`);
      if (row.instance_id !== command.instance_id) return { kind: 'elsewhere' };
      const outcome = outcomeOf(row);
      return outcome ? { kind: 'done', outcome } : { kind: 'interrupted' };
    });
  }

  /** Stores the outcomes of claimed sends in one statement. */
  async finish(results: readonly { readonly send: SendRef; readonly result: SendResult }[]): Promise<Map<string, SendOutcome>> {
    const accepted = (r: SendResult) => (r.kind === 'accepted' ? r : undefined);
    const failed = (r: SendResult) => (r.kind === 'failed' ? r : undefined);
    const { rows } = await this.pool.query<{ message_id: string; finished_at: Date }>(
      `UPDATE connector.executed e SET wa_message_id = o.wa_message_id, error_code = o.error_code,
                                       error_reason = o.error_reason, finished_at = now()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS o(message_id, wa_message_id, error_code, error_reason)
       WHERE e.message_id = o.message_id
       RETURNING e.message_id, e.finished_at`,
      [
        results.map((r) => r.send.message_id),
        results.map((r) => accepted(r.result)?.wa_message_id ?? null),
        results.map((r) => failed(r.result)?.error_code ?? null),
        results.map((r) => failed(r.result)?.error_reason ?? null),
      ],
    );
    const finishedAt = new Map(rows.map((row) => [row.message_id, row.finished_at.getTime()]));
    for (const { send, result } of results) if (result.kind === 'accepted') this.remember(send, result.wa_message_id);
    return new Map(results.map(({ send, result }) => [send.message_id, { result, finished_at: finishedAt.get(send.message_id) ?? Date.now() }]));
  }

  /** The sends receipts are about, by network id; messages we did not send (the owner's own, for one) are absent. */
  async byNetworkIds(instanceId: InstanceId, waMessageIds: readonly string[]): Promise<Map<string, SendRef>> {
    const found = new Map<string, SendRef>();
    for (const waId of waMessageIds) {
      const send = this.recent.get(networkKey(instanceId, waId));
      if (send) found.set(waId, send);
    }
    const missing = waMessageIds.filter((waId) => !found.has(waId));
    if (missing.length === 0) return found;
    const { rows } = await this.pool.query<Row>(
      'SELECT * FROM connector.executed WHERE instance_id = $1 AND wa_message_id = ANY($2::text[])',
      [instanceId, missing],
    );
    for (const row of rows) found.set(row.wa_message_id!, refOf(row));
    return found;
  }

  /**
   * Whether a send of the number claimed less than `withinMs` ago has no outcome stored: a run that
   * took it to the network stopped before storing it, and the send goes again when its command is
   * read again. A receipt of one of our sends that is not found may be its.
   */
  async claimedUnfinished(instanceId: InstanceId, withinMs: number): Promise<boolean> {
    const { rows } = await this.pool.query(
      `SELECT 1 FROM connector.executed WHERE instance_id = $1 AND finished_at IS NULL AND claimed_at > now() - make_interval(secs => $2) LIMIT 1`,
      [instanceId, withinMs / 1_000],
    );
    return rows.length > 0;
  }

  private remember(send: SendRef, waMessageId: string): void {
    const { message_id, instance_id, account_id, project_id, to, client_reference, campaign_id } = send;
    this.recent.set(networkKey(instance_id, waMessageId), { message_id, instance_id, account_id, project_id, to, client_reference, campaign_id });
    if (this.recent.size > RECENT_SENDS) this.recent.delete(this.recent.keys().next().value!);
  }

  private async rows(messageIds: readonly string[]): Promise<Map<string, Row>> {
    if (messageIds.length === 0) return new Map();
    const { rows } = await this.pool.query<Row>('SELECT * FROM connector.executed WHERE message_id = ANY($1::text[])', [messageIds]);
    return new Map(rows.map((row) => [row.message_id, row]));
  }

  async purge(): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM connector.executed WHERE claimed_at < now() - make_interval(days => $1)`, [KEEP_DAYS]);
    return rowCount ?? 0;
  }
}

const networkKey = (instanceId: string, waMessageId: string) => `${instanceId}\u0000${waMessageId}`;

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
    campaign_id: row.campaign_id,
  };
}
