import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { asEventId, newId, type AccountId, type ConnectionId, type ProjectId } from '../../schemas/ids.js';
import type { ApiKey, ConfigRecord } from '../../schemas/records.js';

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
