import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { InstanceState, NumberCommand } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import type { ProcessFence } from '../../shared/process-fence.js';
import type { ConnectorCommands, NetworkConnector, SessionEvents } from '../network/connector.js';
import { FirstConnections } from './first-connections.js';
import { NumberLeases } from './lease.js';
import type { BaileysMapping } from './mapping.js';
import { BaileysSession } from './session.js';
import type { SocketOptions } from './socket-options.js';
import { prepareBaileysTables } from './tables.js';

export interface BaileysNetworkDeps {
  readonly pool: Pool;
  /** The leases' own connections (`leasePool`), apart from message traffic. */
  readonly leasePool: Pool;
  readonly logger: Logger;
  readonly socket: SocketOptions;
  readonly mapping: BaileysMapping;
  /** The process's fence (stack/member-liveness.ts), when it runs one: a dead worker's leases then end within seconds. */
  readonly fence?: ProcessFence;
}

/**
 * The real messaging network through Baileys: one socket per number, its auth state in Postgres,
 * fenced by a lease so two workers never hold the same number's socket at once.
 */
export class BaileysNetwork implements NetworkConnector {
  readonly kind = 'baileys' as const;
  /** Pairing and unlinking requests of `gw.commands.numbers`, applied to the sessions of this worker. */
  readonly commands: ConnectorCommands<NumberCommand> = { topic: topics.numberCommands, apply: (command) => this.apply(command) };
  /** This worker's name on the leases: unique per process, readable in the table. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly sessions = new Map<string, BaileysSession>();
  private readonly leases: NumberLeases;
  private readonly firstConnections: FirstConnections;

  constructor(private readonly deps: BaileysNetworkDeps) {
    this.leases = new NumberLeases(deps.leasePool, deps.socket.leaseRenewMs * 3);
    this.firstConnections = new FirstConnections(deps.pool);
    deps.fence?.onEnd((token) => {
      for (const session of this.sessions.values()) session.fenceEnded(token);
    });
  }

  /** Creates the connector's tables, and purges what it keeps past its time now and every hour. */
  prepare(): Promise<void> {
    return prepareBaileysTables(this.deps.pool, this.deps.logger);
  }

  async open(instance: InstanceState, events: SessionEvents): Promise<BaileysSession> {
    const id = instance.instance_id;
    const { pool, logger, socket, mapping } = this.deps;
    const session = new BaileysSession(instance, events, { pool, leases: this.leases, owner: this.owner, fence: this.deps.fence, logger, socket, mapping, firstConnected: this.firstConnections }, () => {
      if (this.sessions.get(id) === session) this.sessions.delete(id);
    });
    this.sessions.set(id, session);
    void session.start();
    return session;
  }

  async apply({ instance_id: id, command }: NumberCommand): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) {
      this.deps.logger.info({ instanceId: id, command: command.kind }, 'command for a number without a Baileys session here; ignored');
      return;
    }
    if (command.kind === 'pair') await session.pair(command.method, command.phone ?? undefined);
    else await session.unlink(command.reason ?? 'unlinked');
  }

  sessionOf(instanceId: string): BaileysSession | undefined {
    return this.sessions.get(instanceId);
  }

  /** The numbers whose sessions are open here. */
  openSessions(): string[] {
    return [...this.sessions.keys()].sort();
  }
}
