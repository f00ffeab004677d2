import { createAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import type { Clients } from '../../stack/clients.js';
import { waitFor } from './env.js';

/**
 * Resolves once the connector role serves numbers: a throwaway sandbox number is paired and seen
 * connected in the instances projection. Under a loaded broker the connector's group can take a
 * while to get its partitions; a test that pairs numbers from a browser starts after this.
 */
export async function untilConnectorServes(clients: Clients): Promise<void> {
  const probe = await createAccount(clients.producer, { name: 'Probe', email: `probe-${Date.now()}@probe.test`, plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
  await waitFor('the connector serving numbers', async () => {
    const { rows } = await clients.pool.query<{ status: string }>('SELECT status FROM instances.numbers WHERE instance_id = $1', [probe.instance_ids[0]]);
    return rows[0]?.status === 'connected' || undefined;
  }, { timeoutMs: 90_000 });
}
