import type { Pool } from 'pg';
import type { AccountId, ConnectionId, InstanceId, PartnerId, ProjectId } from '../../schemas/ids.js';
import { asEventId, newId } from '../../schemas/ids.js';
import type { ConfigRecord, Customer, RevokedBy } from '../../schemas/records.js';
import { endOffsets, topicName, topics, type Kafka, type Producer } from '../../topics/index.js';
import type { Clock } from '../../shared/clock.js';
import { withDeadline } from '../../shared/deadline.js';
import type { Directory } from '../directory.js';
import { includesConnect } from '../usage/plans.js';
import { decide, type CheckTrigger, type ConnectionInput, type RefusalCode, type Standing } from './machine.js';
import type { ConnectionEntry, ConnectionsView } from './view.js';

/** A step of the flow the connection's state does not allow; `code` is the spec's error code. */
export class ConnectionRefused extends Error {
  constructor(readonly code: RefusalCode) {
    super(`connection refused: ${code}`);
    this.name = 'ConnectionRefused';
  }
}

export interface ConnectionWriterDeps {
  readonly pool: Pool;
  readonly kafka: Kafka;
  readonly producer: Producer;
  readonly prefix: string;
  readonly view: ConnectionsView;
  readonly directory: Directory;
  readonly clock: Clock;
}

const WRITE_DEADLINE_MS = 10_000;

/**
 * The only writer of `gw.connections`. Writers of one connection are serialised across processes
 * by a Postgres advisory lock; under it the local view is first brought up to the end of the
 * topic, so each decision is made on the latest state, and the lock is released only once the
 * view holds the new record.
 */
export class ConnectionWriter {
  constructor(private readonly deps: ConnectionWriterDeps) {}

  /** The connection of (partner, external_id): created, pre-fill updated while unlinked, or reopened when revoked. */
  open(input: { partnerId: PartnerId; externalId: string; customer: Customer }): Promise<ConnectionEntry> {
    return this.locked(`connection:${input.partnerId}:${input.externalId}`, () =>
      this.apply(this.deps.view.ofExternal(input.partnerId, input.externalId), { kind: 'open', ...input }),
    );
  }

  /** pending_account → pending_payment, or pending_number when the plan already includes Connect. */
  linkAccount(id: ConnectionId, account: { accountId: AccountId; projectId: ProjectId }): Promise<ConnectionEntry> {
    return this.step(id, () => ({ kind: 'link', ...account, planPaid: this.standing(account.accountId, account.projectId).planPaid }));
  }

  /** Holds the connection against its account's plan and existence: advances, suspends, resumes or revokes. */
  check(id: ConnectionId, trigger: CheckTrigger): Promise<ConnectionEntry> {
    return this.step(id, (current) => ({ kind: 'check', trigger, standing: this.standing(current.account_id, current.project_id) }));
  }

  /** pending_number → active, with the number that completed it. */
  complete(id: ConnectionId, input: { instanceId: InstanceId; hasConnectedNumber: boolean }): Promise<ConnectionEntry> {
    return this.step(id, (current) => ({ kind: 'complete', ...input, planPaid: this.standing(current.account_id, current.project_id).planPaid }));
  }

  /** Ends the connection and revokes the keys issued through it. */
  revoke(id: ConnectionId, by: RevokedBy): Promise<ConnectionEntry> {
    return this.step(id, () => ({ kind: 'revoke', by }));
  }

  /**
   * What a partner-issued key of this connection may do now (spec 3.1 rule 1): the check the sweeper
   * makes, made on the call itself; a change it finds is written before the call is answered.
   * A key of a deactivated partner answers as revoked without touching the connection.
   */
  async keyStanding(id: ConnectionId): Promise<'usable' | 'suspended' | 'revoked'> {
    let current = this.deps.view.get(id);
    if (current === undefined || this.deps.directory.partners.get(current.partner_id)?.active !== true) return 'revoked';
    const input: ConnectionInput = { kind: 'check', trigger: 'key_call', standing: this.standing(current.account_id, current.project_id) };
    if (decide(current, input, this.deps.clock()).kind === 'write') current = await this.check(id, 'key_call');
    return current.to_status === 'active' ? 'usable' : current.to_status === 'suspended' ? 'suspended' : 'revoked';
  }

  private standing(accountId: string | null, projectId: string | null): Standing {
    const account = accountId === null ? undefined : this.deps.directory.accounts.get(accountId);
    return {
      planPaid: account !== undefined && includesConnect(account.plan),
      accountExists: account !== undefined,
      projectExists: projectId !== null && this.deps.directory.projects.has(projectId),
    };
  }

  private step(id: ConnectionId, input: (current: ConnectionEntry) => ConnectionInput): Promise<ConnectionEntry> {
    return this.locked(`connection:${id}`, async () => {
      const current = this.deps.view.get(id);
      if (current === undefined) throw new Error(`unknown connection ${id}`);
      return this.apply(current, input(current));
    });
  }

  private async apply(current: ConnectionEntry | undefined, input: ConnectionInput): Promise<ConnectionEntry> {
    const decision = decide(current, input, this.deps.clock());
    if (decision.kind === 'refused') throw new ConnectionRefused(decision.code);
    if (decision.kind === 'same') return decision.entry;
    const { record } = decision;
    await withDeadline(this.deps.producer.send(topics.connections, [{ key: record.connection_id, value: record }]), WRITE_DEADLINE_MS);
    await this.deps.view.applied(record.connection_id, record.event_id, WRITE_DEADLINE_MS);
    if (record.to_status === 'revoked') await this.revokeKeys(record.connection_id, record.account_id);
    return record;
  }

  /** The keys issued through a revoked connection stop working at once (spec 3.1 rule 2). */
  private async revokeKeys(connectionId: string, accountId: string | null): Promise<void> {
    if (accountId === null) return;
    const records = keyRevocations(this.deps.directory, connectionId, accountId, this.deps.clock());
    if (records.length === 0) return;
    await withDeadline(this.deps.producer.send(topics.config, records.map((value) => ({ key: value.entity_id, value }))), WRITE_DEADLINE_MS);
    await Promise.all(records.map((r) => this.deps.directory.applied(r.entity_id, r.event_id, WRITE_DEADLINE_MS)));
  }

  /** Runs `work` holding the advisory lock `name`, on the latest state of the topic. */
  private async locked<T>(name: string, work: () => Promise<T>): Promise<T> {
    const client = await this.deps.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
      try {
        const ends = await endOffsets(this.deps.kafka, topicName(topics.connections, this.deps.prefix));
        await this.deps.view.reached(ends, WRITE_DEADLINE_MS);
        return await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
      }
    } finally {
      client.release();
    }
  }
}

/** The `gw.config` records that revoke every live key issued through a connection. */
export function keyRevocations(directory: Directory, connectionId: string, accountId: string, now: number): ConfigRecord[] {
  return directory
    .keysOf(accountId)
    .filter((key) => key.connection_id === connectionId && key.revoked_at === null)
    .map(({ id, account_id, project_id, created_at: _, ...key }) => ({
      event_id: asEventId(newId('cfg')),
      occurred_at: now,
      account_id,
      project_id,
      instance_id: null,
      entity_id: id,
      entity: { kind: 'api_key', ...key, revoked_at: now },
    }));
}
