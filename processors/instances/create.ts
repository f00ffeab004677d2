import { asEventId, asInstanceId, newId, type AccountId, type InstanceId, type ProjectId } from '../../schemas/ids.js';
import type { ConnectorKind, InstanceState } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';

/** Writes a new number, `pending` until its connector pairs it. */
export async function createInstance(
  producer: Producer,
  input: { accountId: AccountId; projectId: ProjectId; nickname: string | null; connector: ConnectorKind; phone?: string | null },
): Promise<InstanceState> {
  const id: InstanceId = asInstanceId(newId('inst'));
  const state: InstanceState = {
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: input.accountId,
    project_id: input.projectId,
    instance_id: id,
    phone: input.phone ?? null,
    nickname: input.nickname,
    status: 'pending',
    previous_status: null,
    reason: null,
    health_score: 100,
    pool_ids: [],
    connector: input.connector,
    deleted: false,
  };
  await producer.send(topics.instances, [{ key: id, value: state }]);
  return state;
}
