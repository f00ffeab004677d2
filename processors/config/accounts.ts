import { asAccountId, asEventId, asProjectId, newId, type AccountId, type InstanceId, type ProjectId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { topics, type Producer } from '../../topics/index.js';
import { createInstance } from '../instances/create.js';
import type { ConnectSandboxNumber } from '../instances/sandbox-pairing.js';
import { issueKey } from './keys.js';
import { changeConfigAlone, type ConfigLock, type ConfigLockDeps } from './lock.js';
import { ConfigRefused } from './refused.js';
import { writeConfigChanges, type ConfigWriter } from './write.js';

export interface NewAccount {
  readonly name: string;
  readonly email: string;
  /** One of the spec's locales (pt, en, es, it, de, fr); `en` when none. */
  readonly locale?: string;
  /** ISO 3166 alpha-2, upper case: the country of phones written in national format; none when absent. */
  readonly country?: string;
  readonly plan?: string;
  /** Sandbox numbers to create and connect at once. */
  readonly sandboxNumbers?: number;
}

export interface CreatedAccount {
  readonly account_id: string;
  readonly project_id: string;
  /** Shown once. */
  readonly api_key: string;
  readonly instance_ids: readonly InstanceId[];
}

/**
 * An account with its default project and an owner key, written to `gw.config`: what the first
 * user of a fresh install (or a test) needs, without any panel.
 */
export async function createAccount(
  producer: Producer,
  input: NewAccount,
  connectSandbox: ConnectSandboxNumber,
): Promise<CreatedAccount> {
  const accountId = asAccountId(newId('acc'));
  const projectId = asProjectId(newId('prj'));
  const now = Date.now();
  const envelope = { occurred_at: now, account_id: accountId, project_id: projectId, instance_id: null };
  const account: ConfigRecord = {
    ...envelope,
    event_id: asEventId(newId('cfg')),
    entity_id: accountId,
    entity: { kind: 'account', name: input.name, email: input.email, locale: input.locale ?? 'en', plan: input.plan ?? 'free', country: input.country ?? null },
  };
  const project: ConfigRecord = {
    ...envelope,
    event_id: asEventId(newId('cfg')),
    entity_id: projectId,
    entity: { kind: 'project', name: input.name, is_default: true },
  };
  // The owner is the account's first admin: the one who may link it to a partner (spec 4.5).
  const owner: ConfigRecord = {
    ...envelope,
    project_id: null,
    event_id: asEventId(newId('cfg')),
    entity_id: newId('usr'),
    entity: { kind: 'user', email: input.email.trim().toLowerCase(), role: 'admin', name: null },
  };
  const key = issueKey({ accountId, projectId, role: 'owner', scopes: ['*'] });
  await producer.send(topics.config, [account, project, owner, key.record].map((value) => ({ key: value.entity_id, value })));

  const instanceIds: InstanceId[] = [];
  for (let i = 0; i < (input.sandboxNumbers ?? 0); i++) {
    const instance = await createInstance(producer, { accountId, projectId, nickname: `Sandbox ${i + 1}`, connector: 'sandbox' });
    await connectSandbox({ accountId, projectId, instanceId: instance.instance_id });
    instanceIds.push(instance.instance_id);
  }
  return { account_id: accountId, project_id: projectId, api_key: key.apiKey, instance_ids: instanceIds };
}

/** The lock under which an account's projects change (and the account is deleted). */
export function projectsLock(accountId: string): ConfigLock {
  return { kind: 'projects', id: accountId };
}

/**
 * A new project of an existing account, written alone among the account's project changes, so a
 * deletion of the account running at once cannot leave it orphaned: refused `unauthorized` once
 * the account is gone.
 */
export async function addProject(
  deps: ConfigLockDeps & ConfigWriter,
  input: { readonly accountId: AccountId; readonly name: string; readonly at: number },
): Promise<{ readonly id: ProjectId; readonly name: string; readonly is_default: false }> {
  const id = asProjectId(newId('prj'));
  await changeConfigAlone(deps, projectsLock(input.accountId), async () => {
    if (!deps.directory.accounts.has(input.accountId)) throw new ConfigRefused('unauthorized');
    await writeConfigChanges(deps, [
      {
        key: id,
        value: {
          event_id: asEventId(newId('cfg')),
          occurred_at: input.at,
          account_id: input.accountId,
          project_id: id,
          instance_id: null,
          entity_id: id,
          entity: { kind: 'project', name: input.name, is_default: false },
        },
      },
    ]);
  });
  return { id, name: input.name, is_default: false };
}

/**
 * Renames a project of the account, or makes it the account's default project (`not_found` when
 * the account has no such project). The new default is written first: a failure between the two
 * writes leaves two defaults (the next change mends it), never none.
 */
export async function changeProject(
  deps: ConfigLockDeps & ConfigWriter,
  input: { readonly accountId: AccountId; readonly projectId: string; readonly name?: string; readonly isDefault?: true; readonly at: number },
): Promise<{ readonly id: ProjectId; readonly name: string; readonly is_default: boolean }> {
  const { directory } = deps;
  return changeConfigAlone(deps, projectsLock(input.accountId), async () => {
    const project = directory.projects.get(input.projectId);
    if (project === undefined || project.account_id !== input.accountId) throw new ConfigRefused('not_found');
    const changed = { name: input.name ?? project.name, is_default: input.isDefault ?? project.is_default };
    const formerDefaults = changed.is_default ? [...directory.projects.values()].filter((p) => p.account_id === project.account_id && p.is_default && p.id !== project.id) : [];
    const write = (id: ProjectId, entity: { name: string; is_default: boolean }) => ({
      key: id,
      value: { event_id: asEventId(newId('cfg')), occurred_at: input.at, account_id: input.accountId, project_id: id, instance_id: null, entity_id: id, entity: { kind: 'project' as const, ...entity } },
    });
    await writeConfigChanges(deps, [write(project.id, changed)]);
    if (formerDefaults.length > 0) await writeConfigChanges(deps, formerDefaults.map((p) => write(p.id, { name: p.name, is_default: false })));
    return { id: project.id, ...changed };
  });
}
