import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { NumberCommand, PairingMethod, SandboxCommand } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';
import type { InstanceRow } from '../../processors/instances/queries.js';

/** What a number's owner asks of its session: pair it, or unlink it from the network. */
export type NumberRequest = { readonly kind: 'pair'; readonly method: PairingMethod; readonly phone: string | null } | { readonly kind: 'unlink'; readonly reason: string };

/**
 * Sends a pairing or unlinking request to the connector that runs the number: a sandbox number
 * takes it as a sandbox control (`gw.sandbox.commands`), a real one as a number command
 * (`gw.commands.numbers`). Either way the QR or code arrives on the streams.
 */
export async function requestOfNumber(producer: Pick<Producer, 'send'>, number: InstanceRow, request: NumberRequest): Promise<void> {
  const envelope: Omit<NumberCommand, 'command'> = {
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId(number.account_id),
    project_id: asProjectId(number.project_id),
    instance_id: asInstanceId(number.instance_id),
  };
  if (number.connector === 'sandbox') {
    const control: SandboxCommand['control'] =
      request.kind === 'pair' ? { kind: 'connect', method: request.method, phone: request.phone, auto: false } : { kind: 'set_status', status: 'disconnected', reason: request.reason };
    await withDeadline(producer.send(topics.sandboxCommands, [{ key: number.instance_id, value: { ...envelope, control } }]), WRITE_DEADLINE_MS);
    return;
  }
  const command: NumberCommand['command'] = request.kind === 'pair' ? { kind: 'pair', method: request.method, phone: request.phone } : { kind: 'disconnect', reason: request.reason };
  await withDeadline(producer.send(topics.numberCommands, [{ key: number.instance_id, value: { ...envelope, command } }]), WRITE_DEADLINE_MS);
}
