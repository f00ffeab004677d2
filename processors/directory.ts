import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { AccountId, ProjectId } from '../schemas/ids.js';
import type { Account, ApiKey, ConfigRecord, Pool, Project, Webhook } from '../schemas/records.js';
import { createConsumer, deleteGroup, recordsOf, endOffsets, topicName, topics, type Kafka, type TopicConsumer, type TopicSerdes } from '../topics/index.js';
import { DeadlineExceeded } from '../shared/deadline.js';

export interface AccountEntry extends Omit<Account, 'kind'> {
  readonly id: AccountId;
}
export interface ProjectEntry extends Omit<Project, 'kind'> {
  readonly id: ProjectId;
  readonly account_id: AccountId;
}
export interface KeyEntry extends Omit<ApiKey, 'kind'> {
  readonly id: string;
  readonly account_id: AccountId;
  readonly project_id: ProjectId;
  readonly created_at: number;
}
export interface PoolEntry extends Omit<Pool, 'kind'> {
  readonly id: string;
  readonly project_id: ProjectId;
}
export interface WebhookEntry extends Omit<Webhook, 'kind'> {
  readonly id: string;
  readonly account_id: AccountId;
  readonly project_id: ProjectId;
  readonly created_at: number;
  readonly updated_at: number;
}

/**
 * The accounts, projects, API keys, pools and webhooks every request (and every delivery) needs, held in memory and kept fresh
 * from the compacted `gw.config` topic: each API process reads it whole at start (its own
 * consumer group, nothing committed), then follows it, so a revoked key stops working in every
 * process within moments of the record being written.
 */
export class Directory {
  readonly accounts = new Map<string, AccountEntry>();
  readonly projects = new Map<string, ProjectEntry>();
  readonly pools = new Map<string, PoolEntry>();
  readonly webhooks = new Map<string, WebhookEntry>();
  /** The same webhooks by project and by account: the dispatcher looks them up for every event. */
  private readonly webhooksByProject = new Map<string, Map<string, WebhookEntry>>();
  private readonly webhooksByAccount = new Map<string, Map<string, WebhookEntry>>();
  private readonly keys = new Map<string, KeyEntry>();
  private readonly keysByHash = new Map<string, KeyEntry>();
  private readonly waiters = new Set<() => void>();
  /** Ids of the writes applied lately, so a writer can wait for its own (bounded). */
  private readonly seen = new Set<string>();
  /** Per partition of `gw.config`, the offset after the last record applied. */
  private readonly offsets = new Map<number, number>();

  keyByHash(hash: string): KeyEntry | undefined {
    return this.keysByHash.get(hash);
  }

  key(id: string): KeyEntry | undefined {
    return this.keys.get(id);
  }

  keysOf(accountId: string): KeyEntry[] {
    return [...this.keys.values()].filter((k) => k.account_id === accountId);
  }

  poolsOf(projectId: string): PoolEntry[] {
    return [...this.pools.values()].filter((p) => p.project_id === projectId);
  }

  /** Webhooks of a project, in no particular order. */
  webhooksOf(projectId: string): WebhookEntry[] {
    return [...(this.webhooksByProject.get(projectId)?.values() ?? [])];
  }

  /** Every webhook of an account, across its projects (account-scope events go to all of them). */
  webhooksOfAccount(accountId: string): WebhookEntry[] {
    return [...(this.webhooksByAccount.get(accountId)?.values() ?? [])];
  }

  /** Applies one record of `gw.config`; a null value (tombstone) removes the entity with that key. */
  apply(entityId: string, record: ConfigRecord | null): void {
    const createdAt = this.keys.get(entityId)?.created_at ?? this.webhooks.get(entityId)?.created_at;
    this.remove(entityId);
    if (record !== null) this.add(record, createdAt);
    this.seen.add(record?.event_id ?? `deleted:${entityId}`);
    if (this.seen.size > SEEN_KEPT) this.seen.delete(this.seen.values().next().value!);
  }

  /** Resolves once this process has applied the given write (`null` for a tombstone) of an entity. */
  async applied(entityId: string, eventId: string | null): Promise<void> {
    const id = eventId ?? `deleted:${entityId}`;
    await this.until(() => this.seen.has(id));
  }

  /** Notes that records of a `gw.config` partition are applied up to `nextOffset` (exclusive). */
  advance(partition: number, nextOffset: number): void {
    this.offsets.set(partition, nextOffset);
  }

  /**
   * Resolves once every partition is applied up to the given end offsets (`endOffsets` of
   * `gw.config`): everything written before they were read is then in this process's view.
   */
  async reached(ends: ReadonlyMap<number, number>, timeoutMs?: number): Promise<void> {
    await this.until(() => [...ends].every(([partition, end]) => (this.offsets.get(partition) ?? 0) >= end), timeoutMs);
  }

  /** Wakes those waiting in `until`: called after each applied batch. */
  settled(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves once `ready()` holds (lets a write answer only after this process sees it); `DeadlineExceeded` after `timeoutMs`. */
  async until(ready: () => boolean, timeoutMs = 5_000): Promise<void> {
    if (ready()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new DeadlineExceeded(timeoutMs));
      }, timeoutMs);
      const check = () => {
        if (!ready()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  private add(record: ConfigRecord, createdAt: number | undefined): void {
    const { entity, entity_id: id } = record;
    const account_id = record.account_id as AccountId;
    const project_id = record.project_id as ProjectId;
    switch (entity.kind) {
      case 'account': {
        const { kind: _, ...rest } = entity;
        this.accounts.set(id, { ...rest, id: id as AccountId });
        return;
      }
      case 'project': {
        const { kind: _, ...rest } = entity;
        this.projects.set(id, { ...rest, id: id as ProjectId, account_id });
        return;
      }
      case 'api_key': {
        const { kind: _, ...rest } = entity;
        const key: KeyEntry = { ...rest, id, account_id, project_id, created_at: createdAt ?? record.occurred_at };
        this.keys.set(id, key);
        this.keysByHash.set(key.key_hash, key);
        return;
      }
      case 'pool': {
        const { kind: _, ...rest } = entity;
        this.pools.set(id, { ...rest, id, project_id });
        return;
      }
      case 'webhook': {
        const { kind: _, ...rest } = entity;
        const webhook: WebhookEntry = { ...rest, id, account_id, project_id, created_at: rest.created_at ?? createdAt ?? record.occurred_at, updated_at: record.occurred_at };
        this.webhooks.set(id, webhook);
        grouped(this.webhooksByProject, project_id).set(id, webhook);
        grouped(this.webhooksByAccount, account_id).set(id, webhook);
        return;
      }
      default:
        // Partners are cached by their own surface.
        return;
    }
  }

  private remove(id: string): void {
    this.accounts.delete(id);
    this.projects.delete(id);
    this.pools.delete(id);
    const webhook = this.webhooks.get(id);
    if (webhook) {
      this.webhooks.delete(id);
      ungroup(this.webhooksByProject, webhook.project_id, id);
      ungroup(this.webhooksByAccount, webhook.account_id, id);
    }
    const key = this.keys.get(id);
    if (key) {
      this.keys.delete(id);
      this.keysByHash.delete(key.key_hash);
    }
  }
}

const SEEN_KEPT = 10_000;

/** The group `key` of an index of entries by group, created when missing. */
function grouped<T>(index: Map<string, Map<string, T>>, key: string): Map<string, T> {
  let group = index.get(key);
  if (!group) index.set(key, (group = new Map<string, T>()));
  return group;
}

/** Drops entry `id` from group `key`, and the group once empty. */
function ungroup<T>(index: Map<string, Map<string, T>>, key: string, id: string): void {
  const group = index.get(key);
  if (group?.delete(id) && group.size === 0) index.delete(key);
}

export interface RunningDirectory {
  readonly directory: Directory;
  stop(): Promise<void>;
}

/** Reads `gw.config` from the beginning and resolves once everything written before the start is applied. */
export async function startDirectory(deps: { kafka: Kafka; serdes: TopicSerdes; logger: Logger }): Promise<RunningDirectory> {
  const directory = new Directory();
  const topic = topicName(topics.config, deps.serdes.prefix);
  const groupId = `${deps.serdes.prefix}directory.${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`;
  const targets = await endOffsets(deps.kafka, topic);

  const consumer: TopicConsumer = await createConsumer(deps.kafka, deps.serdes, { groupId, topics: [topics.config], fromBeginning: true });
  await consumer.run(async (batch) => {
    for (const record of recordsOf(batch, topics.config)) {
      if (!record.decoded.ok) {
        deps.logger.error({ err: record.decoded.error, offset: record.offset }, 'undecodable config record skipped');
      } else if (record.key !== null) {
        // A view every process rebuilds from the log: a record it cannot take is skipped, never retried.
        try {
          directory.apply(record.key, record.decoded.value);
        } catch (err) {
          deps.logger.error({ err, offset: record.offset, partition: record.partition }, 'config record not applied; skipped');
        }
      }
      directory.advance(batch.partition, record.offset + 1);
    }
    directory.settled();
    batch.resolve(batch.records[batch.records.length - 1]!.offset);
  });
  // The last offsets of a compacted partition may have been cleaned away: after a while, start
  // with what was read (the consumer goes on following the topic).
  await directory.reached(targets, 15_000).catch(() => deps.logger.warn('config topic not read to its end at start; following it'));
  return {
    directory,
    async stop() {
      await consumer.stop();
      await deleteGroup(deps.kafka, groupId).catch(() => undefined);
    },
  };
}
