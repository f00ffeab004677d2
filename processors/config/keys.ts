import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { asEventId, newId, type AccountId, type ConnectionId, type ProjectId } from '../../schemas/ids.js';
import type { ApiKey, ConfigRecord } from '../../schemas/records.js';
import type { KeyEntry } from '../directory.js';
import { writeConfig, type ConfigWriter } from './write.js';

/** A customer API key: `svc_live_` and 32 base62 characters (190 bits). */
export function generateKey(): string {
  return secretToken('svc_live_');
}

export interface IssuedKey {
  readonly id: string;
  /** Shown once, never stored. */
  readonly apiKey: string;
  readonly record: ConfigRecord;
}

/** The `gw.config` record of a new key: its hash and a display prefix, never the key. */
export function issueKey(input: {
  accountId: AccountId;
  projectId: ProjectId;
  role: ApiKey['role'];
  scopes: ApiKey['scopes'];
  connectionId?: ConnectionId;
}): IssuedKey {
  const apiKey = generateKey();
  const id = newId('key');
  return {
    id,
    apiKey,
    record: {
      event_id: asEventId(newId('cfg')),
      occurred_at: Date.now(),
      account_id: input.accountId,
      project_id: input.projectId,
      instance_id: null,
      entity_id: id,
      entity: {
        kind: 'api_key',
        key_hash: hashSecret(apiKey),
        prefix: apiKey.slice(0, 13),
        role: input.role,
        scopes: [...input.scopes],
        expires_at: null,
        revoked_at: null,
        connection_id: input.connectionId ?? null,
      },
    },
  };
}

/** A key's record as the directory holds it, with what changes: its project, its end of grace or its revocation. */
export function changedKey(key: KeyEntry, change: { readonly project_id?: ProjectId; readonly expires_at?: number; readonly revoked_at?: number }, at: number): ConfigRecord {
  const { id, account_id, project_id, created_at: _, ...entity } = key;
  return {
    event_id: asEventId(newId('cfg')),
    occurred_at: at,
    account_id,
    project_id: change.project_id ?? project_id,
    instance_id: null,
    entity_id: id,
    entity: { kind: 'api_key', ...entity, expires_at: change.expires_at ?? entity.expires_at, revoked_at: change.revoked_at ?? entity.revoked_at },
  };
}

/** Writes a new key; the answer holds the key itself, to show once. */
export async function createKey(writer: ConfigWriter, input: Parameters<typeof issueKey>[0]): Promise<IssuedKey> {
  const issued = issueKey(input);
  await writeConfig(writer, issued.id, issued.record);
  return issued;
}

/**
 * Rotates a key: the old one works on until `graceEnds`, and a new key of the same project, role
 * and scopes works at once. A partner-issued key stays the connection's: its suspension and
 * revocation reach the new one.
 */
export async function rotateKey(writer: ConfigWriter, old: KeyEntry, graceEnds: number, at: number): Promise<IssuedKey> {
  await writeConfig(writer, old.id, changedKey(old, { expires_at: graceEnds }, at));
  return createKey(writer, { accountId: old.account_id, projectId: old.project_id, role: old.role, scopes: old.scopes, connectionId: old.connection_id ?? undefined });
}

/** Revokes a key at once. */
export async function revokeKey(writer: ConfigWriter, key: KeyEntry, at: number): Promise<void> {
  await writeConfig(writer, key.id, changedKey(key, { revoked_at: at }, at));
}
