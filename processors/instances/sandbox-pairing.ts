import { asAccountId, asEventId, asProjectId, newId, type InstanceId } from '../../schemas/ids.js';
import { topics, type Producer } from '../../topics/index.js';

/** Connects a sandbox number without a person scanning a code (the sandbox connector's `auto` pairing). */
export type ConnectSandboxNumber = (instance: { accountId: string; projectId: string; instanceId: InstanceId }) => Promise<void>;

/** Pairs a sandbox number at once (the `auto` connect control): the connector that owns it takes it from the log. */
export function connectSandboxNumbers(producer: Producer): ConnectSandboxNumber {
  return async ({ accountId, projectId, instanceId }) => {
    await producer.send(topics.sandboxCommands, [
      {
        key: instanceId,
        value: {
          event_id: asEventId(newId('evt')),
          occurred_at: Date.now(),
          account_id: asAccountId(accountId),
          project_id: asProjectId(projectId),
          instance_id: instanceId,
          control: { kind: 'connect', method: 'qr', phone: null, auto: true },
        },
      },
    ]);
  };
}
