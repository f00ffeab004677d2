import type { InstanceState } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config/write.js';
import type { InstanceRow } from './queries.js';
import { stateFromRow } from './row-state.js';

/**
 * Gives a number a new nickname: its state on `gw.instances` with the new nickname. The connector
 * that runs the number keeps its own status and phone over this write (it decides them).
 */
export async function renameInstance(producer: Producer, row: InstanceRow, nickname: string): Promise<InstanceState> {
  const state = stateFromRow(row, { nickname, reason: null, deleted: false });
  await withDeadline(producer.send(topics.instances, [{ key: state.instance_id, value: state }]), WRITE_DEADLINE_MS);
  return state;
}
