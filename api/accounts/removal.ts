import { asEventId, newId, type AccountId, type ProjectId } from '../../schemas/ids.js';
import { addonsId, billingId, brandId, officialId, widgetsId, type Directory, type KeyEntry, type ProjectEntry } from '../../processors/directory.js';
import type { ConfigChange } from '../../processors/config/write.js';

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
  const { id, account_id, project_id, created_at: _, ...entity } = key;
  return {
    key: id,
    value: {
      event_id: asEventId(newId('cfg')),
      occurred_at: now,
      account_id,
      project_id: change.project_id ?? project_id,
      instance_id: null,
      entity_id: id,
      entity: { kind: 'api_key', ...entity, revoked_at: change.revoked_at ?? entity.revoked_at },
    },
  };
}

const tombstone = (key: string): ConfigChange => ({ key, value: null });
