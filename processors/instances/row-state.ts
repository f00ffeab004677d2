import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState } from '../../schemas/records.js';
import type { InstanceRow } from './queries.js';

/** A number's state as the list holds it, written again with `change` (a rename, a removal): a new event. */
export function stateFromRow(row: InstanceRow, change: Pick<InstanceState, 'nickname' | 'reason' | 'deleted'>): InstanceState {
  return {
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId(row.account_id),
    project_id: asProjectId(row.project_id),
    instance_id: asInstanceId(row.instance_id),
    phone: row.phone,
    status: row.status,
    previous_status: null,
    health_score: row.health_score,
    pool_ids: row.pool_ids,
    connector: row.connector === 'baileys' ? 'baileys' : 'sandbox',
    ...change,
  };
}
