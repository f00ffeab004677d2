import type { PoolClient } from 'pg';
import type { CampaignRecipients, CampaignState, InboundMessage, InstanceState, MessageStatus, SendCommand } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import { on, onBatch, sendsTakenInTime, valuesOf, type Applied, type Projection } from '../runtime/projection.js';
import { campaignMessageId } from './ids.js';
import { isNegativeReply, type CampaignWatch } from './autopilot.js';
import { foldStaged, replayedDdl, replayedHandlers } from './replayed.js';
import { idleWatch } from './watch.js';

/**
 * The `campaigns` projection: each campaign's latest state, its recipients, and what became of each
 * recipient's send, read from the status facts of its deterministic message id and from the
 * recipient's replies. A recipient is dispatched once the log took its send command (the runner
 * marks it at once, the projection again from the command); the runner marks a skip in the same
 * table. `replay` mode rebuilds the marks and outcomes from the log (`replayed.ts`), the
 * compacted `gw.messages.state` standing in for the commands, status facts and replies past
 * their retention.
 */
export function campaignsProjection(options: { readonly watch?: CampaignWatch; readonly mode?: 'live' | 'replay' } = {}): Projection {
  const watch = options.watch ?? idleWatch;
  const applied = [
    on(topics.campaigns, applyState),
    on(topics.campaignRecipients, applyChunk),
    // The autopilot pauses a campaign whose number is banned or logged out, and is stricter with a warming one.
    // A replay (idle watch) reads the topic too, so the projection it swaps in does not read the numbers' past again.
    on(topics.instances, async (_tx, number: InstanceState | null) => {
      if (number !== null) watch.numberHealth?.(number.instance_id, number.status, number.status === 'warming');
    }),
  ];
  if (options.mode === 'replay') {
    return {
      name: 'campaigns',
      ddl: [...ddl, ...replayedDdl],
      handlers: [...applied, ...replayedHandlers],
      deriveAfterReplay: (swap) => swap.step(foldStaged),
      changelogCovers: [topics.sendCommands, topics.messageStatus, topics.inboundMessages],
    };
  }
  return {
    name: 'campaigns',
    ddl,
    handlers: [
      ...applied,
      onBatch(topics.sendCommands, (tx, commands) => applyDispatched(tx, valuesOf(sendsTakenInTime(commands)))),
      onBatch(topics.messageStatus, (tx, records) => applyStatuses(tx, records, watch)),
      onBatch(topics.inboundMessages, (tx, records) => applyReplies(tx, records, watch)),
    ],
  };
}

const ddl = [
  `CREATE TABLE IF NOT EXISTS campaigns (
    campaign_id text PRIMARY KEY,
    account_id text NOT NULL,
    project_id text NOT NULL,
    name text NOT NULL,
    status text NOT NULL,
    state jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS campaigns_newest ON campaigns (project_id, created_at DESC, campaign_id DESC)`,
  `CREATE INDEX IF NOT EXISTS campaigns_running ON campaigns (status) WHERE status IN ('running', 'scheduled')`,
  `CREATE TABLE IF NOT EXISTS recipients (
    campaign_id text NOT NULL,
    idx integer NOT NULL,
    to_jid text NOT NULL,
    phone text NOT NULL,
    contact_id text,
    time_zone text,
    variables jsonb NOT NULL,
    message_id text NOT NULL,
    instance_id text,
    skip_reason text,
    error_code text,
    error_reason text,
    dispatched_at timestamptz,
    sent_at timestamptz,
    delivered_at timestamptz,
    read_at timestamptz,
    failed_at timestamptz,
    replied_at timestamptz,
    status text GENERATED ALWAYS AS (CASE
      WHEN skip_reason IS NOT NULL THEN 'skipped'
      WHEN failed_at IS NOT NULL THEN 'failed'
      WHEN read_at IS NOT NULL THEN 'read'
      WHEN delivered_at IS NOT NULL THEN 'delivered'
      WHEN sent_at IS NOT NULL THEN 'sent'
      WHEN dispatched_at IS NOT NULL THEN 'queued'
      ELSE 'pending' END) STORED,
    PRIMARY KEY (campaign_id, idx)
  )`,
  `CREATE UNIQUE INDEX IF NOT EXISTS recipients_message ON recipients (message_id)`,
  `CREATE INDEX IF NOT EXISTS recipients_pending ON recipients (campaign_id, idx) WHERE dispatched_at IS NULL AND skip_reason IS NULL`,
  `CREATE INDEX IF NOT EXISTS recipients_status ON recipients (campaign_id, status, idx)`,
  `CREATE INDEX IF NOT EXISTS recipients_replies ON recipients (instance_id, to_jid) WHERE replied_at IS NULL`,
];

/** Marks the recipients of campaign send commands dispatched, when the command was written (as the runner does). */
export async function applyDispatched(tx: PoolClient, commands: readonly SendCommand[]): Promise<void> {
  const sends = commands.filter((c) => c.campaign_id !== null);
  if (sends.length === 0) return;
  await tx.query(
    `UPDATE recipients r SET dispatched_at = coalesce(r.dispatched_at, s.at), instance_id = coalesce(r.instance_id, s.instance_id)
     FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS s(message_id, instance_id, at) WHERE r.message_id = s.message_id`,
    [sends.map((c) => c.message_id), sends.map((c) => c.instance_id), sends.map((c) => new Date(c.occurred_at))],
  );
}

async function applyState(tx: PoolClient, state: CampaignState | null, meta: { key: string | null }): Promise<void> {
  if (state === null) {
    await tx.query('DELETE FROM campaigns WHERE campaign_id = $1', [meta.key]);
    await tx.query('DELETE FROM recipients WHERE campaign_id = $1', [meta.key]);
    return;
  }
  await tx.query(
    `INSERT INTO campaigns (campaign_id, account_id, project_id, name, status, state, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0), to_timestamp($8 / 1000.0))
     ON CONFLICT (campaign_id) DO UPDATE SET name = EXCLUDED.name, status = EXCLUDED.status, state = EXCLUDED.state, updated_at = EXCLUDED.updated_at
     WHERE campaigns.updated_at <= EXCLUDED.updated_at`,
    [state.campaign_id, state.account_id, state.project_id, state.name, state.status, JSON.stringify(state), state.created_at, state.occurred_at],
  );
}

async function applyChunk(tx: PoolClient, chunk: CampaignRecipients | null): Promise<void> {
  if (chunk === null || chunk.recipients.length === 0) return;
  const rows = chunk.recipients.map((r, n) => ({ ...r, idx: chunk.first_index + n }));
  await tx.query(
    `INSERT INTO recipients (campaign_id, idx, to_jid, phone, contact_id, time_zone, variables, message_id)
     SELECT $1, r.idx, r.to_jid, r.phone, r.contact_id, r.time_zone, r.variables::jsonb, r.message_id
     FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS r(idx, to_jid, phone, contact_id, time_zone, variables, message_id)
     ON CONFLICT (campaign_id, idx) DO NOTHING`,
    [
      chunk.campaign_id,
      rows.map((r) => r.idx),
      rows.map((r) => r.to),
      rows.map((r) => r.phone),
      rows.map((r) => r.contact_id),
      rows.map((r) => r.time_zone),
      rows.map((r) => JSON.stringify(r.variables)),
      rows.map((r) => campaignMessageId(chunk.campaign_id, r.idx)),
    ],
  );
}

interface Outcome {
  instanceId: string;
  sent: number | null;
  delivered: number | null;
  read: number | null;
  failed: number | null;
  errorCode: string | null;
  errorReason: string | null;
}

const earliest = (a: number | null, b: number) => (a === null ? b : Math.min(a, b));

/** A batch's statuses, one outcome per message: a delivery or a read also proves the send. */
function outcomes(statuses: readonly MessageStatus[]): Map<string, Outcome> {
  const byMessage = new Map<string, Outcome>();
  for (const s of statuses) {
    const o = byMessage.get(s.message_id) ?? { instanceId: s.instance_id, sent: null, delivered: null, read: null, failed: null, errorCode: null, errorReason: null };
    if (s.status === 'failed') {
      o.failed = earliest(o.failed, s.occurred_at);
      o.errorCode = s.error_code;
      o.errorReason = s.error_reason;
    } else {
      o.sent = earliest(o.sent, s.occurred_at);
      if (s.status === 'delivered' || s.status === 'read') o.delivered = earliest(o.delivered, s.occurred_at);
      if (s.status === 'read') o.read = earliest(o.read, s.occurred_at);
    }
    byMessage.set(s.message_id, o);
  }
  return byMessage;
}

async function applyStatuses(tx: PoolClient, records: readonly Applied<MessageStatus>[], watch: CampaignWatch): Promise<void> {
  const byMessage = outcomes(valuesOf(records));
  if (byMessage.size === 0) return;
  const ids = [...byMessage.keys()];
  const list = [...byMessage.values()];
  const ts = (pick: (o: Outcome) => number | null) => list.map((o) => pick(o));
  // Only the facts new to a recipient go to the watch: a status read twice (a restart) counts once.
  const { rows } = await tx.query<{ campaign_id: string; instance_id: string; new_sent: boolean; new_delivered: boolean; new_read: boolean; new_failed: boolean; error_code: string | null; error_reason: string | null; at: Date }>(
    `WITH s AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::text[])
         AS s(message_id, instance_id, sent, delivered, read, failed, error_code, error_reason)
     ), old AS (
       SELECT r.campaign_id, r.idx, r.sent_at, r.delivered_at, r.read_at, r.failed_at FROM recipients r JOIN s USING (message_id) FOR UPDATE OF r
     )
     UPDATE recipients r SET
       instance_id = s.instance_id,
       dispatched_at = coalesce(r.dispatched_at, to_timestamp(coalesce(s.sent, s.failed) / 1000.0)),
       sent_at = coalesce(r.sent_at, to_timestamp(s.sent / 1000.0)),
       delivered_at = coalesce(r.delivered_at, to_timestamp(s.delivered / 1000.0)),
       read_at = coalesce(r.read_at, to_timestamp(s.read / 1000.0)),
       failed_at = coalesce(r.failed_at, to_timestamp(s.failed / 1000.0)),
       error_code = coalesce(r.error_code, s.error_code),
       error_reason = coalesce(r.error_reason, s.error_reason)
     FROM s, old
     WHERE r.message_id = s.message_id AND old.campaign_id = r.campaign_id AND old.idx = r.idx
     RETURNING r.campaign_id, r.instance_id, s.error_code, s.error_reason,
       (old.sent_at IS NULL AND s.sent IS NOT NULL) AS new_sent,
       (old.delivered_at IS NULL AND s.delivered IS NOT NULL) AS new_delivered,
       (old.read_at IS NULL AND s.read IS NOT NULL) AS new_read,
       (old.failed_at IS NULL AND s.failed IS NOT NULL) AS new_failed,
       now() AS at`,
    [ids, list.map((o) => o.instanceId), ts((o) => o.sent), ts((o) => o.delivered), ts((o) => o.read), ts((o) => o.failed), list.map((o) => o.errorCode), list.map((o) => o.errorReason)],
  );
  for (const row of rows) {
    const base = { campaignId: row.campaign_id, instanceId: row.instance_id, at: row.at.getTime() };
    if (row.new_sent) watch.record({ kind: 'sent', ...base });
    if (row.new_delivered) watch.record({ kind: 'delivered', ...base });
    if (row.new_read) watch.record({ kind: 'read', ...base });
    if (row.new_failed) watch.record({ kind: 'failed', ...base, ...(row.error_code === null ? {} : { reason: row.error_code }) });
  }
}

/** A recipient replied: a message of theirs reached the number that sent them the campaign, after it did. */
async function applyReplies(tx: PoolClient, records: readonly Applied<InboundMessage>[], watch: CampaignWatch): Promise<void> {
  const inbound = valuesOf(records).filter((m) => m.origin === 'customer' && m.group === null);
  if (inbound.length === 0) return;
  // A reply that pushes back ("stop sending me this", "spam") is also a negative reply for the autopilot.
  const negative = inbound.map((m) => m.content.kind === 'text' && isNegativeReply(m.content.body));
  const { rows } = await tx.query<{ campaign_id: string; instance_id: string; replied_at: Date; negative: boolean }>(
    `UPDATE recipients r SET replied_at = to_timestamp(m.at / 1000.0)
     FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[]) AS m(instance_id, chat_jid, at, negative)
     WHERE r.instance_id = m.instance_id AND r.to_jid = m.chat_jid AND r.replied_at IS NULL AND r.dispatched_at <= to_timestamp(m.at / 1000.0)
     RETURNING r.campaign_id, r.instance_id, r.replied_at, m.negative`,
    [inbound.map((m) => m.instance_id), inbound.map((m) => m.chat_jid), inbound.map((m) => m.occurred_at), negative],
  );
  for (const row of rows) {
    const fact = { campaignId: row.campaign_id, instanceId: row.instance_id, at: row.replied_at.getTime() };
    watch.record({ kind: 'replied', ...fact });
    if (row.negative) watch.record({ kind: 'negative_reply', ...fact });
  }
}
