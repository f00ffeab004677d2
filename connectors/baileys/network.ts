import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { InstanceState } from '../../schemas/records.js';
import { runDdl } from '../../shared/ddl.js';
import type { NetworkConnector, SessionEvents } from '../network/connector.js';
import { authStoreDdl } from './auth-store.js';
import { FirstConnections, firstConnectionsDdl } from './first-connections.js';
import { leaseDdl, NumberLeases } from './lease.js';
import type { BaileysMapping } from './mapping.js';
import { BaileysSession } from './session.js';
import type { SocketOptions } from './socket-options.js';

export interface BaileysNetworkDeps {
  readonly pool: Pool;
  readonly logger: Logger;
  readonly socket: SocketOptions;
  readonly mapping: BaileysMapping;
}

/**
 * The real messaging network through Baileys: one socket per number, its auth state in Postgres,
 * fenced by a lease so two workers never hold the same number's socket at once.
 */
export class BaileysNetwork implements NetworkConnector {
  readonly kind = 'baileys' as const;
  /** This worker's name on the leases: unique per process, readable in the table. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly sessions = new Map<string, BaileysSession>();
  private readonly leases: NumberLeases;
  private readonly firstConnections: FirstConnections;

  constructor(private readonly deps: BaileysNetworkDeps) {
    this.leases = new NumberLeases(deps.pool, deps.socket.leaseRenewMs * 3);
    this.firstConnections = new FirstConnections(deps.pool);
  }

  prepare(): Promise<void> {
    return runDdl(this.deps.pool, 'baileys', [...authStoreDdl, ...leaseDdl, ...firstConnectionsDdl, ...this.deps.mapping.ddl]);
  }

  async open(instance: InstanceState, events: SessionEvents): Promise<BaileysSession> {
    const id = instance.instance_id;
    const { pool, logger, socket, mapping } = this.deps;
    const session = new BaileysSession(instance, events, { pool, leases: this.leases, owner: this.owner, logger, socket, mapping, firstConnected: this.firstConnections }, () => {
      if (this.sessions.get(id) === session) this.sessions.delete(id);
    });
    this.sessions.set(id, session);
    session.start().catch((err: unknown) => logger.error({ err, instanceId: id }, 'baileys session did not start'));
    return session;
  }

  sessionOf(instanceId: string): BaileysSession | undefined {
    return this.sessions.get(instanceId);
  }

  /** The numbers whose sessions are open here. */
  openSessions(): string[] {
    return [...this.sessions.keys()].sort();
  }
}
