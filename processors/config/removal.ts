import type { AccountId, ProjectId } from '../../schemas/ids.js';
import { addonsId, billingId, brandId, officialId, widgetsId, type Directory, type KeyEntry, type ProjectEntry } from '../directory.js';
import { removeNumbersOf } from '../instances/delete.js';
import { projectsLock } from './accounts.js';
import { changedKey } from './keys.js';
import { changeConfigAlone, type ConfigLockDeps } from './lock.js';
import { ConfigRefused } from './refused.js';
import { writeConfigChanges, type ConfigChange, type ConfigWriter } from './write.js';

/**
 * What removing a project or an account takes: its changes are made alone under the account's
 * projects lock, and its numbers are read from the instances projection (on the lock's pool).
 */
export type RemovalDeps = ConfigLockDeps & ConfigWriter;

/**
 * Deletes a project of the account with what is under it (`projectRemoval`), then its numbers.
 * The default project goes only with the account. A process that dies between the two leaves
 * numbers of a project that is no more: the sweeper removes them (processors/instances/orphans.ts).
 */
export async function removeProject(deps: RemovalDeps, input: { readonly accountId: AccountId; readonly projectId: string; readonly at: number }): Promise<void> {
  const { directory } = deps;
  const project = await changeConfigAlone(deps, projectsLock(input.accountId), async () => {
    const project = directory.projects.get(input.projectId);
    if (project === undefined || project.account_id !== input.accountId) throw new ConfigRefused('not_found');
    const defaultProject = directory.defaultProjectOf(project.account_id);
    if (project.is_default || defaultProject === undefined) {
      throw new ConfigRefused('invalid_request', 'the default project cannot be deleted: make another project the default first (PATCH /projects/{id} {"is_default": true}), or delete the account');
    }
    await writeConfigChanges(deps, projectRemoval(directory, project, defaultProject.id, input.at));
    return project;
  });
  await removeNumbersOf(deps, [project.id]);
}

/** Deletes the account with everything under it (`accountRemoval`), then the numbers of its projects (as in `removeProject`). */
export async function removeAccount(deps: RemovalDeps, input: { readonly accountId: AccountId; readonly at: number }): Promise<void> {
  const projects = await changeConfigAlone(deps, projectsLock(input.accountId), async () => {
    const projects = [...deps.directory.projects.values()].filter((p) => p.account_id === input.accountId);
    await writeConfigChanges(deps, accountRemoval(deps.directory, input.accountId, input.at));
    return projects;
  });
  await removeNumbersOf(deps, projects.map((p) => p.id));
}

/**
 * What deleting a project writes: tombstones of its webhooks, pools, keys and itself, but for two
 * kinds of keys. A partner-issued key stays, revoked, so that its calls go on answering 401
 * `connect_revoked` once the sweeper revokes its connection (`project_deleted`, spec 3.1) instead
 * of an unknown key's `unauthorized`. An owner key moves to the account's default project: the
 * owner's way into the account does not go with one of its projects.
 */
export function projectRemoval(directory: Directory, project: ProjectEntry, defaultProjectId: ProjectId, now: number): ConfigChange[] {
  const keys = directory.keysOf(project.account_id).filter((k) => k.project_id === project.id);
  return [
    ...keys.flatMap((key) => (key.role === 'owner' && key.connection_id === null ? [keyChange(key, { project_id: defaultProjectId }, now)] : keyEnd(key, now))),
    ...directory.webhooksOf(project.id).map((w) => tombstone(w.id)),
    ...directory.poolsOf(project.id).map((p) => tombstone(p.id)),
    tombstone(project.id),
  ];
}

/** What deleting an account writes: tombstones of everything under it, but its partner-issued keys stay, revoked (as in `projectRemoval`). */
export function accountRemoval(directory: Directory, accountId: AccountId, now: number): ConfigChange[] {
  const projects = [...directory.projects.values()].filter((p) => p.account_id === accountId);
  return [
    ...directory.keysOf(accountId).flatMap((key) => keyEnd(key, now)),
    ...projects.flatMap((p) => [...directory.webhooksOf(p.id), ...directory.poolsOf(p.id)]).map((entity) => tombstone(entity.id)),
    ...directory.usersOf(accountId).map((u) => tombstone(u.id)),
    ...(directory.holdsAddons(accountId) ? [tombstone(addonsId(accountId))] : []),
    ...(directory.billingOf(accountId) !== undefined ? [tombstone(billingId(accountId))] : []),
    ...(directory.brandOf(accountId) !== undefined ? [tombstone(brandId(accountId))] : []),
    ...(directory.officialOf(accountId) !== undefined ? [tombstone(officialId(accountId))] : []),
    ...(directory.widgetsOf(accountId) !== undefined ? [tombstone(widgetsId(accountId))] : []),
    ...projects.map((p) => tombstone(p.id)),
    tombstone(accountId),
  ];
}

/** The end of a key whose project goes: a tombstone, or for a partner-issued key its revocation (none when already revoked). */
function keyEnd(key: KeyEntry, now: number): ConfigChange[] {
  if (key.connection_id === null) return [tombstone(key.id)];
  return key.revoked_at === null ? [keyChange(key, { revoked_at: now }, now)] : [];
}

function keyChange(key: KeyEntry, change: { project_id?: ProjectId; revoked_at?: number }, now: number): ConfigChange {
  return { key: key.id, value: changedKey(key, change, now) };
}

/** The deletion of an entity of `gw.config`. */
export const tombstone = (key: string): ConfigChange => ({ key, value: null });
