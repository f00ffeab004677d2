import type { Logger } from 'pino';
import type { ConnectionTransition } from '../../schemas/records.js';
import { topics, type Kafka, type TopicSerdes } from '../../topics/index.js';
import { FollowedView, followView, type RunningView } from '../runtime/followed-view.js';

/** The current state of one partner connection: its last transition on `gw.connections`. */
export type ConnectionEntry = ConnectionTransition;

/**
 * Every partner connection, held in memory by each process that needs it on a hot path (the
 * API checks a partner-issued key's connection on every call; the dispatcher finds the
 * partners of a project for every event), kept fresh from the compacted `gw.connections` topic.
 */
export class ConnectionsView extends FollowedView<ConnectionTransition> {
  private readonly byId = new Map<string, ConnectionEntry>();
  private readonly byExternal = new Map<string, ConnectionEntry>();
  private readonly byProject = new Map<string, Map<string, ConnectionEntry>>();

  get(id: string): ConnectionEntry | undefined {
    return this.byId.get(id);
  }

  /** The connection of a partner's customer (unique per partner and external_id, spec 2.6). */
  ofExternal(partnerId: string, externalId: string): ConnectionEntry | undefined {
    return this.byExternal.get(externalKey(partnerId, externalId));
  }

  ofPartner(partnerId: string): ConnectionEntry[] {
    return [...this.byId.values()].filter((c) => c.partner_id === partnerId);
  }

  ofAccount(accountId: string): ConnectionEntry[] {
    return [...this.byId.values()].filter((c) => c.account_id === accountId);
  }

  /** Connections linked to a project now (any status but revoked). */
  onProject(projectId: string): ConnectionEntry[] {
    return [...(this.byProject.get(projectId)?.values() ?? [])];
  }

  all(): IterableIterator<ConnectionEntry> {
    return this.byId.values();
  }

  protected writeId(value: ConnectionTransition): string {
    return value.event_id;
  }

  protected applyValue(id: string, value: ConnectionTransition | null): void {
    const previous = this.byId.get(id);
    if (previous) {
      this.byId.delete(id);
      this.byExternal.delete(externalKey(previous.partner_id, previous.external_id));
      if (previous.project_id !== null) {
        const group = this.byProject.get(previous.project_id);
        if (group?.delete(id) && group.size === 0) this.byProject.delete(previous.project_id);
      }
    }
    if (value === null) return;
    this.byId.set(id, value);
    this.byExternal.set(externalKey(value.partner_id, value.external_id), value);
    if (value.project_id !== null && value.to_status !== 'revoked') {
      let group = this.byProject.get(value.project_id);
      if (!group) this.byProject.set(value.project_id, (group = new Map<string, ConnectionEntry>()));
      group.set(id, value);
    }
  }
}

function externalKey(partnerId: string, externalId: string): string {
  return `${partnerId}\u0000${externalId}`;
}

/** Reads `gw.connections` from the beginning and resolves once everything written before the start is applied. */
export function startConnectionsView(deps: { kafka: Kafka; serdes: TopicSerdes; logger: Logger }): Promise<RunningView<ConnectionsView>> {
  return followView(deps, topics.connections, new ConnectionsView(), 'connections-view');
}
