import type { PoolClient } from 'pg';
import { planNamed } from '../../api/plans.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import { on, type Projection, type RecordMeta } from '../runtime/projection.js';
import {
  accountPlan,
  addToTotals,
  allowanceOf,
  countersDdl,
  markCounted,
  markFired,
  removePlan,
  setPlan,
  usageProjectionName,
} from './counters.js';
import { periodOf } from './period.js';
import { sendUsage, storedMediaUsage, type UsageRow } from './rows.js';
import { reachedPercents, thresholdEvent, thresholdRecord, type Threshold } from './thresholds.js';

/**
 * Counts each account's sends of the month and stored media against its plan, and fires
 * `usage.threshold` at 80, 90 and 100 percent: a `threshold_reached` record on `gw.usage` and the
 * public event on `gw.events`. Each threshold fires once a period; its event id comes from what it
 * is, so a batch retried after the records were written repeats the same ids.
 *
 * The plan of each account comes from `gw.config` (Free until one is seen). The counters are as
 * good as the log: a replay rebuilds them only from what the topics still retain (7 days of
 * sends, 30 days of media records), so this projection is not one to replay.
 */
export function usageProjection(producer: Producer): Projection {
  return {
    name: usageProjectionName,
    ddl: countersDdl,
    handlers: [
      on(topics.config, (tx, record, meta) => applyConfig(tx, record, meta)),
      on(topics.sendCommands, async (tx, command) => {
        if (command !== null) await count(tx, producer, sendUsage(command));
      }),
      on(topics.usage, async (tx, record) => {
        const row = record === null ? undefined : storedMediaUsage(record);
        if (row) await count(tx, producer, row);
      }),
    ],
  };
}

async function applyConfig(tx: PoolClient, record: ConfigRecord | null, meta: RecordMeta): Promise<void> {
  // A tombstone carries only the key: the entity id, which for an account is the account id.
  if (record === null) {
    if (meta.key !== null) await removePlan(tx, meta.key);
  } else if (record.entity.kind === 'account') {
    await setPlan(tx, record.entity_id, record.entity.plan);
  }
}

async function count(tx: PoolClient, producer: Producer, row: UsageRow): Promise<void> {
  if (!(await markCounted(tx, row))) return;
  const period = periodOf(row.occurred_at).id;
  const used = await addToTotals(tx, row, period);
  // Thresholds are reached by growth: removing stored media never fires one.
  if (row.quantity <= 0) return;

  const allowance = allowanceOf(row);
  const plan = planNamed(await accountPlan(tx, row.account_id));
  const included = allowance === 'messages' ? plan.messagesPerMonth : plan.mediaStorageBytes;
  const reached = reachedPercents(used, included).map(
    (percent): Threshold => ({ accountId: row.account_id, period, allowance, percent, used, included, plan: plan.name, occurredAt: row.occurred_at }),
  );
  if (reached.length === 0) return;
  const fired = await markFired(tx, reached);
  if (fired.length === 0) return;
  await producer.send(topics.usage, fired.map((t) => ({ key: t.accountId, value: thresholdRecord(t) })));
  await producer.send(topics.events, fired.map((t) => ({ key: t.accountId, value: thresholdEvent(t) })));
}
