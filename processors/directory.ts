import type { Logger } from 'pino';
import type { AccountId, PartnerId, ProjectId } from '../schemas/ids.js';
import type { Account, AccountAddons, Advisory, BillingDetails, Brand, OfficialRequest, Widgets, ApiKey, ConfigRecord, Partner, PartnerLogo, PlatformAdmin, Pool, Project, User, Webhook } from '../schemas/records.js';
import { topics, type Kafka, type TopicSerdes } from '../topics/index.js';
import { FollowedView, followView, type RunningView } from './runtime/followed-view.js';

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
export interface PartnerEntry extends Omit<Partner, 'kind'> {
  readonly id: PartnerId;
  /** When the partner was registered (its first record). */
  readonly created_at: number;
}
export type PartnerLogoEntry = Omit<PartnerLogo, 'kind'>;

/** The `gw.config` key of a partner's logo: one per partner, so compaction keeps only the latest. */
export function partnerLogoId(partnerId: string): string {
  return `logo:${partnerId}`;
}

export interface UserEntry extends Omit<User, 'kind'> {
  readonly id: string;
  readonly account_id: AccountId;
}
export interface PlatformAdminEntry extends Omit<PlatformAdmin, 'kind'> {
  readonly id: string;
}
export interface AdvisoryEntry extends Omit<Advisory, 'kind'> {
  readonly id: string;
}
export type AddonsEntry = Omit<AccountAddons, 'kind'>;

/** The `gw.config` key of an account's add-ons: one record per account, holding them all. */
export function addonsId(accountId: string): string {
  return `addons:${accountId}`;
}

const NO_ADDONS: AddonsEntry = { media_storage: 0 };

export type BillingEntry = Omit<BillingDetails, 'kind'>;

export type BrandEntry = Omit<Brand, 'kind'>;
export type OfficialEntry = Omit<OfficialRequest, 'kind'>;

/** The `gw.config` keys of an account's brand and official-sender request: one record each per account. */
export const brandId = (accountId: string) => `brand:${accountId}`;
export const officialId = (accountId: string) => `official:${accountId}`;
export type WidgetsEntry = Omit<Widgets, 'kind'>;
/** The `gw.config` key of an account's widgets: one record per account. */
export const widgetsId = (accountId: string) => `widgets:${accountId}`;

/** The `gw.config` key of an account's billing details: one record per account. */
export function billingId(accountId: string): string {
  return `billing:${accountId}`;
}

/**
 * The accounts, projects, users, API keys, pools, webhooks, partners (and their logos), platform administrators and advisories every request (and every delivery) needs, held in memory and kept fresh
 * from the compacted `gw.config` topic: each API process reads it whole at start (its own
 * consumer group, nothing committed), then follows it, so a revoked key stops working in every
 * process within moments of the record being written.
 */
export class Directory extends FollowedView<ConfigRecord> {
  readonly accounts = new Map<string, AccountEntry>();
  readonly projects = new Map<string, ProjectEntry>();
  readonly pools = new Map<string, PoolEntry>();
  readonly webhooks = new Map<string, WebhookEntry>();
  /** The same webhooks by project and by account: the dispatcher looks them up for every event. */
  private readonly webhooksByProject = new Map<string, Map<string, WebhookEntry>>();
  private readonly webhooksByAccount = new Map<string, Map<string, WebhookEntry>>();
  readonly partners = new Map<string, PartnerEntry>();
  readonly users = new Map<string, UserEntry>();
  readonly platformAdmins = new Map<string, PlatformAdminEntry>();
  private readonly partnersBySecretHash = new Map<string, PartnerEntry>();
  /** Partner logos by their key (`partnerLogoId`). */
  private readonly partnerLogos = new Map<string, PartnerLogoEntry>();
  private readonly usersByEmail = new Map<string, Map<string, UserEntry>>();
  private readonly platformAdminsBySecretHash = new Map<string, PlatformAdminEntry>();
  private readonly keys = new Map<string, KeyEntry>();
  /** Advisories by affected account: each is seen only by the accounts it names (spec 6.1). */
  private readonly advisoriesByAccount = new Map<string, Map<string, AdvisoryEntry>>();
  private readonly advisories = new Map<string, AdvisoryEntry>();
  private readonly keysByHash = new Map<string, KeyEntry>();
  /** Add-ons by their key (`addonsId`). */
  private readonly addons = new Map<string, AddonsEntry>();

  /** The add-ons the account holds; none before its first `POST /me/addons`. */
  addonsOf(accountId: string): AddonsEntry {
    return this.addons.get(addonsId(accountId)) ?? NO_ADDONS;
  }

  /** Whether the account has an add-ons record (its deletion removes it). */
  holdsAddons(accountId: string): boolean {
    return this.addons.has(addonsId(accountId));
  }

  /** Billing details by their key (`billingId`). */
  private readonly billing = new Map<string, BillingEntry>();

  private readonly brands = new Map<string, BrandEntry>();
  private readonly officials = new Map<string, OfficialEntry>();
  private readonly widgets = new Map<string, WidgetsEntry>();

  /** The account's widgets; none before its first `PUT /me/widgets`. */
  widgetsOf(accountId: string): WidgetsEntry | undefined {
    return this.widgets.get(widgetsId(accountId));
  }

  /** The account's brand; none before its first `PUT /brand`. */
  brandOf(accountId: string): BrandEntry | undefined {
    return this.brands.get(brandId(accountId));
  }

  /** The account's official-sender request; none before its first `POST /official`. */
  officialOf(accountId: string): OfficialEntry | undefined {
    return this.officials.get(officialId(accountId));
  }

  /** The account's billing details; none before its first `PUT /billing`. */
  billingOf(accountId: string): BillingEntry | undefined {
    return this.billing.get(billingId(accountId));
  }

  keyByHash(hash: string): KeyEntry | undefined {
    return this.keysByHash.get(hash);
  }

  key(id: string): KeyEntry | undefined {
    return this.keys.get(id);
  }

  /** The partner whose current secret hashes to `hash`; a rotated secret finds none. */
  partnerBySecretHash(hash: string): PartnerEntry | undefined {
    return this.partnersBySecretHash.get(hash);
  }

  /** Where the partner's logo is stored, and what it is. */
  partnerLogo(partnerId: string): PartnerLogoEntry | undefined {
    return this.partnerLogos.get(partnerLogoId(partnerId));
  }

  /** The advisories published to the account, newest first. */
  advisoriesOf(accountId: string): AdvisoryEntry[] {
    return [...(this.advisoriesByAccount.get(accountId)?.values() ?? [])].sort((a, b) => b.published_at - a.published_at || (a.id < b.id ? 1 : -1));
  }

  /** The platform administrator whose credential hashes to `hash`. */
  platformAdminBySecretHash(hash: string): PlatformAdminEntry | undefined {
    return this.platformAdminsBySecretHash.get(hash);
  }

  /** Every user with this e-mail (compared lower-cased), across accounts. */
  usersWithEmail(email: string): UserEntry[] {
    return [...(this.usersByEmail.get(email.toLowerCase())?.values() ?? [])];
  }

  /** The account an e-mail belongs to, and the role it has there: where it is an admin wins over where it is a member. */
  accountOfEmail(email: string): { accountId: AccountId; role: 'admin' | 'member' } | undefined {
    const users = this.usersWithEmail(email).filter((u) => this.accounts.has(u.account_id));
    const admin = users.find((u) => u.role === 'admin');
    const user = admin ?? users[0];
    return user && { accountId: user.account_id, role: admin ? 'admin' : 'member' };
  }

  usersOf(accountId: string): UserEntry[] {
    return [...this.users.values()].filter((u) => u.account_id === accountId);
  }

  /** The account's default project (Connect links it). */
  defaultProjectOf(accountId: string): ProjectEntry | undefined {
    return [...this.projects.values()].find((p) => p.account_id === accountId && p.is_default);
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

  protected writeId(record: ConfigRecord): string {
    return record.event_id;
  }

  protected applyValue(entityId: string, record: ConfigRecord | null): void {
    const createdAt = this.keys.get(entityId)?.created_at ?? this.webhooks.get(entityId)?.created_at ?? this.partners.get(entityId)?.created_at;
    this.remove(entityId);
    if (record !== null) this.add(record, createdAt);
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
      case 'partner': {
        const { kind: _, ...rest } = entity;
        const partner: PartnerEntry = { ...rest, id: id as PartnerId, created_at: createdAt ?? record.occurred_at };
        this.partners.set(id, partner);
        this.partnersBySecretHash.set(partner.secret_hash, partner);
        return;
      }
      case 'partner_logo': {
        const { kind: _, ...rest } = entity;
        this.partnerLogos.set(id, rest);
        return;
      }
      case 'user': {
        const { kind: _, ...rest } = entity;
        const user: UserEntry = { ...rest, email: rest.email.toLowerCase(), id, account_id };
        this.users.set(id, user);
        grouped(this.usersByEmail, user.email).set(id, user);
        return;
      }
      case 'platform_admin': {
        const { kind: _, ...rest } = entity;
        const admin: PlatformAdminEntry = { ...rest, id };
        this.platformAdmins.set(id, admin);
        this.platformAdminsBySecretHash.set(admin.secret_hash, admin);
        return;
      }
      case 'advisory': {
        const { kind: _, ...rest } = entity;
        const advisory: AdvisoryEntry = { ...rest, id };
        this.advisories.set(id, advisory);
        for (const account of advisory.accounts) grouped(this.advisoriesByAccount, account).set(id, advisory);
        return;
      }
      case 'account_addons': {
        const { kind: _, ...rest } = entity;
        this.addons.set(id, rest);
        return;
      }
      case 'billing_details': {
        const { kind: _, ...rest } = entity;
        this.billing.set(id, rest);
        return;
      }
      case 'brand': {
        const { kind: _, ...rest } = entity;
        this.brands.set(id, rest);
        return;
      }
      case 'official_request': {
        const { kind: _, ...rest } = entity;
        this.officials.set(id, rest);
        return;
      }
      case 'widgets': {
        const { kind: _, ...rest } = entity;
        this.widgets.set(id, rest);
        return;
      }
    }
  }

  private remove(id: string): void {
    this.accounts.delete(id);
    const partner = this.partners.get(id);
    if (partner) {
      this.partners.delete(id);
      this.partnersBySecretHash.delete(partner.secret_hash);
    }
    const user = this.users.get(id);
    if (user) {
      this.users.delete(id);
      ungroup(this.usersByEmail, user.email, id);
    }
    const admin = this.platformAdmins.get(id);
    if (admin) {
      this.platformAdmins.delete(id);
      this.platformAdminsBySecretHash.delete(admin.secret_hash);
    }
    this.partnerLogos.delete(id);
    this.addons.delete(id);
    this.billing.delete(id);
    this.brands.delete(id);
    this.officials.delete(id);
    this.widgets.delete(id);
    const advisory = this.advisories.get(id);
    if (advisory) {
      this.advisories.delete(id);
      for (const account of advisory.accounts) ungroup(this.advisoriesByAccount, account, id);
    }
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

export type RunningDirectory = RunningView<Directory> & { readonly directory: Directory };

/** Reads `gw.config` from the beginning and resolves once everything written before the start is applied. */
export async function startDirectory(deps: { kafka: Kafka; serdes: TopicSerdes; logger: Logger }): Promise<RunningDirectory> {
  const running = await followView(deps, topics.config, new Directory(), 'directory');
  return { ...running, directory: running.view };
}
