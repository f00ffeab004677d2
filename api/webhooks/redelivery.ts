import type { DeliveryWithBody } from '../../processors/deliveries/index.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { DeliveryTask } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import type { Producer, TopicSpec } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import { gatewayError } from '../errors.js';

/**
 * Delivers a recorded delivery's event again, as a new delivery with its own retries: like svix's
 * resend, the API makes no HTTP call; it queues a `manual` task on the first retry tier, which the
 * dispatcher takes like any other. Answers the new delivery's id.
 */
export async function queueRedelivery(
  { producer, firstTier }: { readonly producer: Producer; readonly firstTier: TopicSpec<DeliveryTask> },
  delivery: DeliveryWithBody,
  target: { readonly kind: DeliveryTask['target_kind']; readonly id: string },
): Promise<string> {
  if (delivery.body_json === null) {
    throw gatewayError('invalid_request', { detail: 'the first attempt of this delivery is not recorded yet; try again shortly' });
  }
  const now = Date.now();
  const task: DeliveryTask = {
    event_id: asEventId(delivery.event_id),
    occurred_at: now,
    account_id: asAccountId(delivery.account_id),
    project_id: delivery.project_id === null ? null : asProjectId(delivery.project_id),
    instance_id: delivery.instance_id === null ? null : asInstanceId(delivery.instance_id),
    delivery_id: newId('dlv'),
    target_kind: target.kind,
    target_id: target.id,
    event_type: delivery.event_type,
    trigger: 'manual',
    attempt: 1,
    not_before: now,
    last_error: null,
    body_json: delivery.body_json,
  };
  await withDeadline(producer.send(firstTier, [{ key: target.id, value: task }]), WRITE_DEADLINE_MS);
  return task.delivery_id;
}
