import type { InstanceState, SandboxCommand } from '../../schemas/records.js';
import { topics } from '../../topics/index.js';
import type { ConnectorCommands, NetworkConnector, SessionEvents } from '../network/connector.js';
import { SandboxSession, type SandboxView, type SessionDeps } from './session.js';

export interface SandboxNetworkDeps extends SessionDeps {
  /** How often the network looks for overdue receipts of its open sessions (ms). */
  readonly sweepEveryMs?: number;
}

const SWEEP_EVERY_MS = 2_000;
/** A receipt this far past due, held by no session here, was left by a session that closed. */
const OVERDUE_MS = 2_000;
/** Overdue receipts taken on per sweep; the next sweep takes the rest. */
const SWEEP_LIMIT = 1_000;

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
  private sweeps?: NodeJS.Timeout;
  private sweeping = false;

  constructor(private readonly deps: SandboxNetworkDeps) {}

  async open(instance: InstanceState, events: SessionEvents): Promise<SandboxSession> {
    const id = instance.instance_id;
    const session = new SandboxSession(instance, events, this.deps, () => {
      if (this.sessions.get(id) === session) this.sessions.delete(id);
      if (this.sessions.size === 0) this.stopSweeps();
    });
    this.sessions.set(id, session);
    await session.loadBehaviour();
    session.resume(Date.now());
    this.sweeps ??= setInterval(() => void this.sweep(), this.deps.sweepEveryMs ?? SWEEP_EVERY_MS).unref();
    return session;
  }

  /**
   * A session writes the receipts of its own sends and, when it opens, those of sends made before.
   * While a partition moves, the worker it leaves may still send for a moment after the new one
   * opened, and then close before the receipts fall due: this takes those on, once overdue.
   */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.sessions.size === 0) return;
    this.sweeping = true;
    try {
      const overdue = await this.deps.receipts.overdue([...this.sessions.keys()], Date.now() - OVERDUE_MS, SWEEP_LIMIT);
      for (const receipt of overdue) void this.sessions.get(receipt.instance_id)?.adopt(receipt);
    } catch (err) {
      this.deps.logger.warn({ err }, 'sandbox sweep for overdue receipts failed; tried again at the next');
    } finally {
      this.sweeping = false;
    }
  }

  private stopSweeps(): void {
    clearInterval(this.sweeps);
    this.sweeps = undefined;
  }

  /** Creates the sandbox's own tables (`sandbox.pending_receipts`, `sandbox.behaviours`). */
  async prepare(): Promise<void> {
    await this.deps.receipts.ensureSchema();
    await this.deps.behaviours.ensureSchema();
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
