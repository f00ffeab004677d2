import { asAccountId, asEventId, asProjectId, newId } from '../../schemas/ids.js';
import { topics, type Producer } from '../../topics/index.js';
import type { ConnectSandboxNumber } from '../config/accounts.js';

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
