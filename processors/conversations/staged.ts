import type { PoolClient } from 'pg';
import type { InboundMessage, MessageRowState, MessageState, MessageStatus, SendCommand } from '../../schemas/records.js';
import type { Applied } from '../runtime/projection.js';
import type { ReplaySwap } from '../runtime/projection.js';
import { checkStagingKept, copyStaged, inPart, STAGING_DDL, STAGING_TABLES, swapParts, type ColumnOf, type SwapPart } from '../runtime/staging.js';
import type { Producer } from '../../topics/index.js';
import { publishMessageStates, stateChanges } from './changelog.js';
import { isChange, recordChanges, type ChangeRow } from './changes.js';
import type { MessageRow, StoredRow } from './rows.js';

/**
 * A replay's writes of `messages`, staged: every write of a message (a send, a received message,
 * a status fact, a state from the changelog) becomes a row of `staged_messages`, and a merge folds
 * them into `messages` per message with the rules of the writes applied one by one, which give the
 * same row in any order: the content of the first write that has one (a state first, as the live
 * projection kept it, then the records in log order), the base of a row without content from its
 * first write, the status and its times merged as `STATUS_MERGE` does.
 */

/**
 * The staging tables: `messages`'s columns, where the row came from (0 a state, 1 a record) and
 * its offset; the messages whose states the replay writes to the changelog.
 */
export const stagedDdl = [
  ...STAGING_DDL,
  `CREATE UNLOGGED TABLE IF NOT EXISTS staged_messages (LIKE messages, source smallint NOT NULL, seq bigint NOT NULL)`,
  `CREATE UNLOGGED TABLE IF NOT EXISTS staged_news (message_id text NOT NULL)`,
];

const NEWS_COLUMNS: ReadonlyMap<string, ColumnOf<string>> = new Map([['message_id', (id: string) => id]]);
const FROM_STATE = 0;
const FROM_RECORD = 1;
const FORWARD = `ARRAY['queued', 'sent', 'delivered', 'read']`;

export interface StagedMessages {
  /** Sends and received messages that are not changes (edits and deletions), as `recordMessages` takes them. */
  stageMessages<V extends SendCommand | InboundMessage>(tx: PoolClient, records: readonly Applied<V>[], rowOf: (value: V) => MessageRow): Promise<void>;
  stageStatuses(tx: PoolClient, facts: readonly Applied<MessageStatus>[]): Promise<void>;
  /**
   * States of the changelog, with the merges of the event topics: a state and the records it came
   * from give the same row in any order, and a state newer than what the event topics still hold
   * is not moved back by them. Their changes are recorded at once (the first of each is kept).
   * Messages are never deleted from the history: the topic has no tombstones.
   */
  stageStates(tx: PoolClient, records: readonly Applied<MessageState>[]): Promise<void>;
  /** Messages whose states go to the changelog at the swap. */
  stageNews(tx: PoolClient, messageIds: readonly string[]): Promise<void>;
  /** At the swap: folds the staged rows into the empty `messages` (its parts side by side), writes the states of the news, drops the staging tables. */
  mergeAtSwap(swap: ReplaySwap, producer: Producer): Promise<void>;
}

/** A staged write of a message: what it says, where it came from (`FROM_STATE`, `FROM_RECORD`) and its offset. */
interface Staged<T> {
  readonly of: T;
  readonly source: number;
  readonly seq: number;
}

type Accessors<T> = ReadonlyMap<string, ColumnOf<Staged<T>>>;

/** The columns of a status fact's row (`applyStatuses`'s INSERT); the others are NULL. */
const FACT_COLUMNS: Readonly<Record<string, ColumnOf<MessageStatus>>> = {
  message_id: (f) => f.message_id,
  account_id: (f) => f.account_id,
  project_id: (f) => f.project_id,
  instance_id: (f) => f.instance_id,
  jid: (f) => f.to,
  direction: () => 'out',
  occurred_at: (f) => new Date(f.occurred_at),
  to_jid: (f) => f.to,
  mentions: () => [],
  client_reference: (f) => f.client_reference,
  status: (f) => f.status,
  sent_at: (f) => (f.status === 'sent' ? new Date(f.occurred_at) : null),
  delivered_at: (f) => (f.status === 'delivered' ? new Date(f.occurred_at) : null),
  read_at: (f) => (f.status === 'read' ? new Date(f.occurred_at) : null),
  failed_at: (f) => (f.status === 'failed' ? new Date(f.occurred_at) : null),
  wa_message_id: (f) => f.wa_message_id,
  error_code: (f) => f.error_code,
  error_reason: (f) => f.error_reason,
};

const STATE_TIMES = new Set(['occurred_at', 'queued_at', 'sent_at', 'delivered_at', 'read_at', 'failed_at']);
const STATE_OWN = new Set(['message_id', 'account_id', 'project_id', 'instance_id', 'error_reason', 'campaign_id']);

/** A state's column: the message's, its ids, failure reason and campaign the state's own, times as timestamps. */
function stateColumn(column: string): ColumnOf<MessageState> {
  const key = column as keyof MessageState & keyof MessageRowState;
  if (STATE_OWN.has(column)) return (state) => state[key];
  if (STATE_TIMES.has(column)) {
    return (state) => {
      const ms = state.message![key] as number | null;
      return ms === null ? null : new Date(ms);
    };
  }
  return (state) => state.message![key];
}

/** Accessors of the columns of `staged_messages` an item has a value for (`column`); COPY leaves the others NULL. */
function accessors<T>(columns: readonly string[], column: (name: string) => ColumnOf<T> | undefined): Accessors<T> {
  const staged = new Map<string, ColumnOf<Staged<T>>>([
    ['source', (s) => s.source],
    ['seq', (s) => s.seq],
  ]);
  for (const name of columns) {
    const of = name === 'source' || name === 'seq' ? undefined : column(name);
    if (of) staged.set(name, (s) => of(s.of));
  }
  return staged;
}

export function stagedMessages(): StagedMessages {
  // The columns of `staged_messages`, read once from the table (the projection's DDL defines them).
  let columns: Promise<string[]> | undefined;
  const columnsOf = (tx: PoolClient) =>
    (columns ??= tx
      .query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'staged_messages' ORDER BY ordinal_position`,
      )
      .then(({ rows }) => rows.map((row) => row.column_name)));
  const once = <T>(make: (columns: readonly string[]) => Accessors<T>) => {
    let made: Accessors<T> | undefined;
    return async (tx: PoolClient) => (made ??= make(await columnsOf(tx)));
  };
  const messageColumns = once<MessageRow>((names) => accessors(names, (name) => (row) => row[name as keyof MessageRow]));
  const factColumns = once<MessageStatus>((names) => accessors(names, (name) => FACT_COLUMNS[name]));
  const stateColumns = once<MessageState>((names) => accessors(names, stateColumn));
  const stage = async <T>(tx: PoolClient, columnsFor: (tx: PoolClient) => Promise<Accessors<T>>, items: readonly Staged<T>[]) => {
    if (items.length > 0) await copyStaged(tx, 'staged_messages', await columnsFor(tx), items);
  };
  return {
    // Loops rather than flatMap: a replay stages every record, and an array per record is garbage to collect.
    stageMessages: (tx, records, rowOf) => {
      const items: Staged<MessageRow>[] = [];
      for (const { value, meta } of records) if (value !== null && !isChange(value)) items.push({ of: rowOf(value), source: FROM_RECORD, seq: meta.offset });
      return stage(tx, messageColumns, items);
    },
    stageStatuses: (tx, facts) => {
      const items: Staged<MessageStatus>[] = [];
      for (const { value, meta } of facts) if (value !== null) items.push({ of: value, source: FROM_RECORD, seq: meta.offset });
      return stage(tx, factColumns, items);
    },
    stageStates: async (tx, records) => {
      // The last state of each message in the records, at its offset: it holds what the earlier ones held.
      const latest = new Map<string, Staged<MessageState>>();
      for (const { value, meta } of records) if (value !== null) latest.set(value.message_id, { of: value, source: FROM_STATE, seq: meta.offset });
      const states = [...latest.values()];
      await stage(tx, stateColumns, states.filter((state) => state.of.message !== null));
      await recordChanges(tx, stateChanges(states.map((state) => state.of)));
    },
    stageNews: (tx, messageIds) => copyStaged(tx, 'staged_news', NEWS_COLUMNS, messageIds),
    async mergeAtSwap(swap, producer) {
      await swap.step(checkStagingKept);
      await swap.together(
        swapParts().map((part) => async (tx) => {
          // The staged rows of the part are sorted once, in memory.
          await tx.query(`SET LOCAL work_mem TO '256MB'`);
          await tx.query(mergeStatement((await columnsOf(tx)).filter((c) => c !== 'source' && c !== 'seq'), part));
        }),
      );
      await swap.step(async (tx) => {
        const news = 'SELECT message_id FROM staged_news';
        const { rows } = await tx.query<StoredRow>(`SELECT * FROM messages WHERE message_id IN (${news})`);
        const { rows: changes } = await tx.query<ChangeRow>(`SELECT * FROM message_changes WHERE change_id IN (${news})`);
        await publishMessageStates(tx, producer, rows, changes);
        await tx.query(`DROP TABLE staged_messages, staged_news, ${STAGING_TABLES.join(', ')}`);
      });
    },
  };
}

/**
 * One row per staged message of `part`, inserted into the empty `messages`, merged as a state is applied: its base is its first write
 * with content (or, without any, its first write), its status the furthest (failed is final),
 * each status time the first, its network id, error code, reason and campaign the first known. One sort of the staged
 * rows serves the base (the first of each message) and the merged columns (its window); bytewise
 * (COLLATE "C"), which groups the same ids and sorts several times faster than the locale's order.
 */
function mergeStatement(columns: readonly string[], part: SwapPart): string {
  const merged: Record<string, string> = {
    status: `CASE WHEN bool_or(status = 'failed') OVER w THEN 'failed' ELSE (${FORWARD})[max(array_position(${FORWARD}, status)) OVER w] END`,
    sent_at: 'min(sent_at) OVER w',
    delivered_at: 'min(delivered_at) OVER w',
    read_at: 'min(read_at) OVER w',
    failed_at: 'min(failed_at) OVER w',
    wa_message_id: '(array_agg(wa_message_id) FILTER (WHERE wa_message_id IS NOT NULL) OVER w)[1]',
    error_code: '(array_agg(error_code) FILTER (WHERE error_code IS NOT NULL) OVER w)[1]',
    error_reason: '(array_agg(error_reason) FILTER (WHERE error_reason IS NOT NULL) OVER w)[1]',
    // A state written before states carried the campaign has none: its send's command has.
    campaign_id: '(array_agg(campaign_id) FILTER (WHERE campaign_id IS NOT NULL) OVER w)[1]',
  };
  return `INSERT INTO messages (${columns.join(', ')})
    SELECT DISTINCT ON (message_id COLLATE "C") ${columns.map((c) => merged[c] ?? c).join(', ')}
    FROM staged_messages
    WHERE ${inPart('message_id', part)}
    WINDOW w AS (PARTITION BY message_id COLLATE "C" ORDER BY type IS NULL, source, seq ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    ORDER BY message_id COLLATE "C", type IS NULL, source, seq`;
}
