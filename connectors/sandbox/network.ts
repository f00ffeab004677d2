import type { InstanceState, SandboxCommand } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import type { ConnectorCommands, NetworkConnector, SessionEvents } from '../network/connector.js';
import { SandboxSession, type SandboxView, type SessionDeps } from './session.js';

/**
 * A simulated messaging network, so the whole service runs end to end on one machine: numbers pair
 * by QR or code, sends get receipts (or fail), customers and the owner's phone write, all driven by
 * the controls of `gw.sandbox.commands`. Sessions live in this process, like Baileys sockets.
 */
export class SandboxNetwork implements NetworkConnector {
  readonly kind = 'sandbox' as const;
  /** The controls of `gw.sandbox.commands`, applied to the sandbox sessions of this worker. */
  readonly commands: ConnectorCommands<SandboxCommand> = { topic: topics.sandboxCommands, apply: (command) => this.apply(command) };
  private readonly sessions = new Map<string, SandboxSession>();

  constructor(private readonly deps: SessionDeps) {}

  async open(instance: InstanceState, events: SessionEvents): Promise<SandboxSession> {
    const id = instance.instance_id;
    const session = new SandboxSession(instance, events, this.deps, () => {
      if (this.sessions.get(id) === session) this.sessions.delete(id);
    });
    this.sessions.set(id, session);
    session.resume(Date.now());
    return session;
  }

  /** Creates the sandbox's own tables (`sandbox.pending_receipts`). */
  prepare(): Promise<void> {
    return this.deps.receipts.ensureSchema();
  }

  async apply(command: SandboxCommand): Promise<void> {
    const session = this.sessions.get(command.instance_id);
    if (!session) {
      this.deps.logger.info({ instanceId: command.instance_id, control: command.control.kind }, 'sandbox control for a number without a sandbox session; ignored');
      return;
    }
    await session.control(command);
  }

  /** The numbers whose sessions are open here. */
  openSessions(): string[] {
    return [...this.sessions.keys()].sort();
  }

  inspect(instanceId: string): SandboxView | undefined {
    return this.sessions.get(instanceId)?.view();
  }
}
