import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config/write.js';
import type { InstanceRow } from './queries.js';

/**
 * Gives a number a new nickname: its state on `gw.instances` with the new nickname. The connector
 * that runs the number keeps its own status and phone over this write (it decides them).
 */
export async function renameInstance(producer: Producer, row: InstanceRow, nickname: string): Promise<InstanceState> {
  const state: InstanceState = {
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId(row.account_id),
    project_id: asProjectId(row.project_id),
    instance_id: asInstanceId(row.instance_id),
    phone: row.phone,
    nickname,
    status: row.status,
    previous_status: null,
    reason: null,
    health_score: row.health_score,
    pool_ids: row.pool_ids,
    connector: row.connector === 'baileys' ? 'baileys' : 'sandbox',
    deleted: false,
  };
  await withDeadline(producer.send(topics.instances, [{ key: state.instance_id, value: state }]), WRITE_DEADLINE_MS);
  return state;
}
