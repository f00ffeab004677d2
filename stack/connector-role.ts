import type pg from 'pg';
import type { BaileysNetwork } from '../connectors/baileys/index.js';
import { leasePool } from '../connectors/baileys/lease.js';
import { prepareBaileysTables } from '../connectors/baileys/tables.js';
import { OpenedOtpCodes, OtpKeys, startConnectorRole, type ConnectorCommands, type NetworkConnector, type OtpOpener } from '../connectors/network/index.js';
import { PendingReceipts, SandboxBehaviours, SandboxNetwork } from '../connectors/sandbox/index.js';
import type { NumberCommand } from '../schemas/records.js';
import { topics } from '../topics/index.js';
import type { Clients } from './clients.js';
import { mediaSink } from './media-sink.js';

/** The connector role: the sandbox and Baileys networks, their OTP codes and the Baileys leases. */
export async function startConnector(clients: Clients): Promise<{ stop(): Promise<void> }> {
  const otp = new OpenedOtpCodes(new OtpKeys(clients.pool), clients.cipher);
  const leases = leasePool(clients.config.databaseUrl, clients.config.baileys.leaseRenewMs, clients.logger);
  const role = await startConnectorRole(clients, { connectors: [sandboxNetwork(clients, otp), baileysOnFirstNumber(clients, otp, leases)], otp });
  return {
    async stop() {
      await role.stop();
      // After the sessions: a closing session renews and releases its lease through this pool.
      await leases.end();
    },
  };
}

/** The simulated network, with received media in the media store and OTP codes opened by the role. */
function sandboxNetwork(clients: Clients, otp: OtpOpener): SandboxNetwork {
  return new SandboxNetwork({
    logger: clients.logger.child({ role: 'connector' }),
    receipts: new PendingReceipts(clients.pool),
    behaviours: new SandboxBehaviours(clients.pool),
    media: mediaSink(clients.media),
    otp,
  });
}

/**
 * The real network through Baileys (`baileysNetwork`), its modules loaded the first time this
 * worker opens a number on it: they take longer to load than the rest of the role (0.6 s on a quiet
 * 2-core machine), so a worker joins its group and serves its sandbox numbers without waiting for
 * them, and one that serves no Baileys number never loads them. Its tables are made and purged
 * when the role starts, as the role's own are.
 */
function baileysOnFirstNumber(clients: Clients, otp: OtpOpener, leases: pg.Pool): NetworkConnector {
  let network: Promise<BaileysNetwork> | undefined;
  const loaded = () => (network ??= import('./baileys-network.js').then(({ baileysNetwork }) => baileysNetwork(clients, otp, leases)));
  // Only a number on Baileys gets these, and its session was opened first.
  const commands: ConnectorCommands<NumberCommand> = { topic: topics.numberCommands, apply: async (command) => (await loaded()).apply(command) };
  return {
    kind: 'baileys',
    prepare: () => prepareBaileysTables(clients.pool, clients.logger),
    commands,
    open: async (instance, events) => (await loaded()).open(instance, events),
  };
}
