import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { campaignPausedEvent } from '../../events/renderers/index.js';
import { publishEvents } from '../../events/publish.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../../schemas/ids.js';
import type { CampaignState, SendCommand } from '../../schemas/records.js';
import { createPartitionOwner, partitionOf, topics, type Kafka, type PartitionOwner, type Producer, type TopicSerdes } from '../../topics/index.js';
import { recipientStandings, standingRefusal } from '../audience/index.js';
import { lastInstanceFor, lastInstancesFor } from '../conversations/index.js';
import type { Directory } from '../directory.js';
import { appendSends } from '../sends/append.js';
import { createNumberChooser, type NumberChooser } from '../sends/number-choice.js';
import { SendRefused } from '../sends/refused.js';
import { nextState, writeState } from './commands.js';
import { ensureProjectionSchema } from '../runtime/store.js';
import { withinHoursSql } from './hours.js';
import { campaignsProjection } from './projection.js';
import { contentFor } from './template.js';
import type { CampaignWatch } from './autopilot.js';

export interface CampaignRunnerDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly pool: Pool;
  readonly producer: Producer;
  readonly directory: Directory;
  readonly logger: Logger;
  readonly watch: CampaignWatch;
  /** Time between two looks at the running campaigns. */
  readonly tickMs?: number;
}

const TICK_MS = 100;
/** Recipients taken in one tick of one campaign at most, whatever its pace. */
const MAX_PER_TICK = 1_000;

interface Due {
  idx: number;
  to_jid: string;
  phone: string;
  variables: Record<string, string>;
  message_id: string;
}

/** Why a recipient is skipped at the moment of its send, in the order the checks are told. */
/**
 * Runs the running campaigns of the `gw.campaigns` partitions this process owns (a consumer group
 * of the processors gives each partition one owner). Every tick, each campaign takes the recipients
 * its pace allows and whose sending hours it is, checks each one's standing then, and writes a
 * send command per recipient under the recipient's own message id; a recipient is marked
 * dispatched once the log took its command. A recipient emitted again (after a crash between the
 * append and the mark, or by the previous owner for a moment) keeps its message id, which the
 * connector executes once.
 */
export async function startCampaignRunner(deps: CampaignRunnerDeps): Promise<{ stop(): Promise<void> }> {
  const logger = deps.logger.child({ component: 'campaign-runner' });
  let owned = new Set<number>();
  const owner: PartitionOwner = await createPartitionOwner(deps.kafka, deps.serdes, {
    groupId: `${deps.serdes.prefix}campaigns.runner`,
    topics: [topics.campaigns],
    logger,
    onAssignment: async (partitions) => {
      owned = new Set(partitions);
      logger.info({ partitions }, 'campaign partitions owned');
    },
  });
  // The runner reads campaigns from the projection; the group only gives it its partitions.
  void owner.run(async (batch) => {
    const last = batch.records[batch.records.length - 1];
    if (last === undefined) return;
    batch.resolve(last.offset);
    await owner.commit(batch.topic, batch.partition, last.offset + 1);
  });

  /** The conversation's number of each recipient of the campaign being dispatched, read for the whole tick at once. */
  let affinity: { projectId: string; numbers: Map<string, string> } | undefined;
  const choose = createNumberChooser({
    pool: deps.pool,
    directory: deps.directory,
    lastInstanceFor: async (projectId, jid) =>
      affinity?.projectId === projectId ? (affinity.numbers.get(jid) ?? null) : lastInstanceFor(deps.pool, projectId, jid),
  });
  const buckets = new Map<string, { tokens: number; at: number }>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  const tick = async () => {
    const { rows } = await deps.pool.query<{ state: CampaignState }>(`SELECT state FROM campaigns.campaigns WHERE status IN ('running', 'scheduled')`);
    const mine = rows.map((r) => r.state).filter((s) => owned.has(partitionOf(s.campaign_id, topics.campaigns.partitions)));
    for (const id of buckets.keys()) if (!mine.some((s) => s.campaign_id === id)) buckets.delete(id);
    for (const state of mine) {
      if (stopped) return;
      try {
        await runOnce(state);
      } catch (err) {
        logger.warn({ err, campaign_id: state.campaign_id }, 'campaign tick failed; trying again next tick');
      }
    }
  };

  const runOnce = async (state: CampaignState) => {
    const now = Date.now();
    if (state.status === 'scheduled') {
      if ((state.start_at === null || state.start_at <= now) && (await stillCurrent(state))) {
        await writeState(deps, { ...state, status: 'running', event_id: asEventId(newId('evt')), occurred_at: now });
      }
      return;
    }
    const decision = deps.watch.trip(state.campaign_id, now);
    if (decision !== undefined && (await stillCurrent(state))) {
      const paused = await writeState(deps, nextState(state, 'pause', now, decision.reason));
      await publishEvents(deps.producer, [campaignPausedEvent(paused, decision)]);
      logger.warn({ campaign_id: state.campaign_id, ...decision }, 'campaign paused by its watch');
      return;
    }
    const bucket = buckets.get(state.campaign_id) ?? { tokens: 0, at: now };
    const burst = Math.max(1, state.pace_per_minute / 60);
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) * state.pace_per_minute) / 60_000);
    bucket.at = now;
    buckets.set(state.campaign_id, bucket);
    const room = Math.min(MAX_PER_TICK, Math.floor(bucket.tokens));
    if (room < 1) return;
    const { rows: due } = await deps.pool.query<Due>(
      `SELECT idx, to_jid, phone, variables, message_id FROM campaigns.recipients
       WHERE campaign_id = $1 AND dispatched_at IS NULL AND skip_reason IS NULL AND ${withinHoursSql('$2', '$3', '$4')}
       ORDER BY idx LIMIT $5`,
      [state.campaign_id, state.time_zone, state.hours_from, state.hours_to, room],
    );
    if (due.length === 0) return finishIfDone(state);
    bucket.tokens -= await dispatch(state, due);
  };

  /** Sends what it can of `due`; returns how many went to the log. */
  const dispatch = async (state: CampaignState, due: readonly Due[]): Promise<number> => {
    const standings = await recipientStandings(deps.pool, state.account_id, due.map((r) => r.phone));
    const skipped = due.flatMap((r) => {
      const reason = standingRefusal('message', standings.get(r.phone)!);
      return reason === undefined ? [] : [{ idx: r.idx, reason }];
    });
    if (skipped.length > 0) {
      await deps.pool.query(
        `UPDATE campaigns.recipients r SET skip_reason = s.reason FROM unnest($2::int[], $3::text[]) AS s(idx, reason)
         WHERE r.campaign_id = $1 AND r.idx = s.idx AND r.dispatched_at IS NULL`,
        [state.campaign_id, skipped.map((s) => s.idx), skipped.map((s) => s.reason)],
      );
      for (const s of skipped) if (s.reason === 'opted_out') deps.watch.record({ kind: 'opted_out', campaignId: state.campaign_id, instanceId: null, at: Date.now() });
    }
    const skippedIdx = new Set(skipped.map((s) => s.idx));
    // A campaign on one number has no choice to make; on several, each recipient stays on its conversation's number.
    affinity = state.instance_ids.length === 1 ? undefined : { projectId: state.project_id, numbers: await lastInstancesFor(deps.pool, state.project_id, due.map((r) => r.to_jid)) };
    const commands: Omit<SendCommand, 'expires_at'>[] = [];
    for (const r of due) {
      if (skippedIdx.has(r.idx)) continue;
      const number = await pick(choose, state, r.to_jid);
      // No number can send now (all disconnected, the pool emptied): the rest wait for the next tick.
      if (number === undefined) break;
      commands.push({
        event_id: asEventId(newId('evt')),
        occurred_at: Date.now(),
        account_id: asAccountId(state.account_id),
        project_id: asProjectId(state.project_id),
        instance_id: asInstanceId(number),
        message_id: asMessageId(r.message_id),
        client_reference: null,
        to: r.to_jid,
        origin: 'campaign',
        campaign_id: state.campaign_id,
        idempotency_key_hash: null,
        content: contentFor(state.content, r.variables),
        quoted_message_id: null,
        mentions: [],
      });
    }
    if (commands.length === 0) return 0;
    const taken = await appendSends(deps.producer, commands);
    const sent = commands.filter((_, i) => taken[i]);
    // Dispatched when the command was written, as the projection (and a replay) reads it from the command.
    await deps.pool.query(
      `UPDATE campaigns.recipients r SET dispatched_at = coalesce(r.dispatched_at, s.at), instance_id = coalesce(r.instance_id, s.instance_id)
       FROM unnest($2::text[], $3::text[], $4::timestamptz[]) AS s(message_id, instance_id, at) WHERE r.campaign_id = $1 AND r.message_id = s.message_id`,
      [state.campaign_id, sent.map((c) => c.message_id), sent.map((c) => c.instance_id), sent.map((c) => new Date(c.occurred_at))],
    );
    return sent.length;
  };

  const pick = async (chooser: NumberChooser, state: CampaignState, to: string): Promise<string | undefined> => {
    try {
      const number = await chooser({ projectId: state.project_id, poolId: state.pool_id ?? undefined, instanceIds: state.instance_ids, to });
      return number.instance_id;
    } catch (error) {
      if (!(error instanceof SendRefused)) throw error;
      logger.info({ campaign_id: state.campaign_id, code: error.code }, 'no number to send the campaign now');
      return undefined;
    }
  };

  /** A campaign with no recipient left to dispatch or skip has finished (no event: spec 6.1). */
  const finishIfDone = async (state: CampaignState) => {
    const { rows } = await deps.pool.query('SELECT 1 FROM campaigns.recipients WHERE campaign_id = $1 AND dispatched_at IS NULL AND skip_reason IS NULL LIMIT 1', [state.campaign_id]);
    if (rows.length > 0 || !(await stillCurrent(state))) return;
    const now = Date.now();
    await writeState(deps, { ...state, status: 'finished', event_id: asEventId(newId('evt')), occurred_at: now, ended_at: now });
  };

  /**
   * Whether the state a tick started from is still the campaign's: a pause or cancel written by a
   * command meanwhile is not overwritten by the runner's own transition (it tries again next tick).
   */
  const stillCurrent = async (state: CampaignState) => {
    const { rows } = await deps.pool.query<{ event_id: string }>(`SELECT state->>'event_id' AS event_id FROM campaigns.campaigns WHERE campaign_id = $1`, [state.campaign_id]);
    return rows[0]?.event_id === state.event_id;
  };

  const loop = () => {
    if (stopped) return;
    current = tick()
      .catch((err: unknown) => logger.warn({ err }, 'campaign tick failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, deps.tickMs ?? TICK_MS);
      });
  };
  // The ticks read the campaigns projection, which a new database does not have until that
  // projection starts, side by side with the runner: made here, after the group's join has begun.
  const projection = campaignsProjection();
  await ensureProjectionSchema(deps.pool, projection, projection.name);
  loop();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
      await owner.stop();
    },
  };
}
