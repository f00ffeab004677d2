import type { PoolClient } from 'pg';
import { publishEvents } from '../../events/publish.js';
import { thresholdEvent, thresholdEventId, type Threshold } from '../../events/renderers/index.js';
import { planNamed } from './plans.js';
import { mediaAllowance } from './addons.js';
import { addonsId } from '../directory.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import { on, onBatch, sendsTakenInTime, valuesOf, type Projection, type RecordMeta } from '../runtime/projection.js';
import {
  accountPlans,
  addToTotals,
  allowanceOf,
  countersDdl,
  markCounted,
  markFired,
  removePlan,
  setMediaAddons,
  setPlan,
  usageProjectionName,
} from './counters.js';
import { periodOf } from './period.js';
import { sendUsage, sentUsage, storedMediaUsage, type UsageRow } from './rows.js';
import { firedThreshold, reachedPercents, thresholdRecord } from './thresholds.js';

/**
 * Counts each account's sends of the month and stored media against its plan, and fires
 * `usage.threshold` at 80, 90 and 100 percent: a `threshold_reached` record on `gw.usage` and the
 * public event on `gw.events`. Each threshold fires once a period; its event id comes from what it
 * is, so a batch retried after the records were written repeats the same ids.
 *
 * The plan of each account comes from `gw.config` (Free until one is seen). A replay rebuilds the
 * counters at any age: the sends from the history's changelog `gw.messages.state` (beside the send
 * commands of the last 7 days; each message counts once whichever it is read from), the media and
 * the thresholds from `gw.usage`, kept for ever.
 *
 * Which thresholds fired depends on the plan each record was counted against, so on how the
 * live run interleaved `gw.config` with the counted topics; a replay reads them in another order.
 * Replayed, it therefore fires none itself: it takes the thresholds the live run fired from their
 * `threshold_reached` records on `gw.usage`, and announces nothing again.
 */
export function usageProjection(producer: Producer, mode: 'live' | 'replay' = 'live'): Projection {
  const counted = mode === 'live' ? (tx: PoolClient, rows: readonly UsageRow[]) => count(tx, producer, rows) : (tx: PoolClient, rows: readonly UsageRow[]) => addUp(tx, rows);
  return {
    name: usageProjectionName,
    ddl: countersDdl,
    handlers: [
      on(topics.config, (tx, record, meta) => applyConfig(tx, record, meta)),
      ...(mode === 'replay' ? [onBatch(topics.messageStates, (tx, states) => counted(tx, valuesOf(states).flatMap((state) => sentUsage(state) ?? [])))] : []),
      onBatch(topics.sendCommands, (tx, commands) => counted(tx, valuesOf(sendsTakenInTime(commands)).map(sendUsage))),
      onBatch(topics.usage, async (tx, records) => {
        const values = valuesOf(records);
        await counted(tx, values.flatMap((record) => storedMediaUsage(record) ?? []));
        if (mode === 'replay') await markFired(tx, values.flatMap((record) => firedThreshold(record) ?? []));
      }),
    ],
    changelogCovers: mode === 'replay' ? [topics.sendCommands] : [],
  };
}

/** Counts the rows once each; the thresholds are left to the records of those the live run fired. */
async function addUp(tx: PoolClient, rows: readonly UsageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const fresh = await markCounted(tx, rows);
  if (fresh.length > 0) await addToTotals(tx, fresh);
}

/** The prefix of an add-ons record's key: its tombstone names the account only through it. */
const ADDONS_KEY = addonsId('');

async function applyConfig(tx: PoolClient, record: ConfigRecord | null, meta: RecordMeta): Promise<void> {
  // A tombstone carries only the key: the entity id, which for an account is the account id.
  if (record === null) {
    if (meta.key?.startsWith(ADDONS_KEY)) await setMediaAddons(tx, meta.key.slice(ADDONS_KEY.length), 0);
    else if (meta.key !== null) await removePlan(tx, meta.key);
  } else if (record.entity.kind === 'account') {
    await setPlan(tx, record.entity_id, record.entity.plan);
  } else if (record.entity.kind === 'account_addons') {
    await setMediaAddons(tx, record.entity_id.slice(ADDONS_KEY.length), record.entity.media_storage);
  }
}

async function count(tx: PoolClient, announce: Producer, rows: readonly UsageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const fresh = await markCounted(tx, rows);
  if (fresh.length === 0) return;
  const used = await addToTotals(tx, fresh);
  const reached = await thresholdsReached(tx, fresh, used);
  if (reached.length === 0) return;
  const fired = await markFired(tx, reached);
  if (fired.length === 0) return;
  await announce.send(topics.usage, fired.map((t) => ({ key: t.accountId, value: thresholdRecord(t) })));
  await publishEvents(announce, fired.map(thresholdEvent));
}

/** The thresholds the rows reach, each with the first row that reaches it (`used[i]` is what is used after row i). */
async function thresholdsReached(tx: PoolClient, rows: readonly UsageRow[], used: readonly number[]): Promise<Threshold[]> {
  const plans = await accountPlans(tx, [...new Set(rows.map((row) => row.account_id))]);
  const reached = new Map<string, Threshold>();
  for (const [i, row] of rows.entries()) {
    // Thresholds are reached by growth: removing stored media never fires one.
    if (row.quantity <= 0) continue;
    const allowance = allowanceOf(row);
    const held = plans.get(row.account_id);
    const plan = planNamed(held?.plan);
    const included = allowance === 'messages' ? plan.messagesPerMonth : mediaAllowance(plan.name, { media_storage: held?.mediaAddons ?? 0 });
    const period = periodOf(row.occurred_at).id;
    for (const percent of reachedPercents(used[i]!, included)) {
      const threshold: Threshold = { accountId: row.account_id, period, allowance, percent, used: used[i]!, included, plan: plan.name, occurredAt: row.occurred_at };
      const id = thresholdEventId(threshold);
      if (!reached.has(id)) reached.set(id, threshold);
    }
  }
  return [...reached.values()];
}
