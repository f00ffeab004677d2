import { asEventId, newId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { topics, type Producer } from '../../topics/index.js';
import { isEmailAddress } from '../../shared/email-address.js';

export interface CreatedPlatformAdmin {
  readonly id: string;
  readonly email: string;
  /** `svc_platform_…`, shown once; only its hash is kept. */
  readonly credential: string;
}

/** A platform administrator (spec 4.7) with a new credential, written to `gw.config`. */
export async function createPlatformAdmin(producer: Producer, email: string): Promise<CreatedPlatformAdmin> {
  const normal = email.trim().toLowerCase();
  if (!isEmailAddress(normal)) throw new Error('--email takes an e-mail address');
  const credential = secretToken('svc_platform_');
  const id = newId('pla');
  const record: ConfigRecord = {
    event_id: asEventId(newId('cfg')),
    occurred_at: Date.now(),
    account_id: null,
    project_id: null,
    instance_id: null,
    entity_id: id,
    entity: { kind: 'platform_admin', email: normal, secret_hash: hashSecret(credential), revoked_at: null },
  };
  await producer.send(topics.config, [{ key: id, value: record }]);
  return { id, email: normal, credential };
}
