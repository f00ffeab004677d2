import type { Pool } from 'pg';
import { PostgresAuthStore } from '../../connectors/baileys/auth-store.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState } from '../../schemas/records.js';

/**
 * A number paired earlier on the real network: its stored creds say who it is (so its session logs
 * in at once), and its state says `connected` on the Baileys connector.
 */
export async function pairedBaileysNumber(pool: Pool, id: string, owner: { account: string; project: string }): Promise<InstanceState> {
  const auth = await PostgresAuthStore.open(pool, id);
  auth.creds.me = { id: '5511988887777:3@s.whatsapp.net', name: id };
  auth.creds.registered = true;
  await auth.saveCreds();
  return {
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId(owner.account),
    project_id: asProjectId(owner.project),
    instance_id: asInstanceId(id),
    phone: '+5511988887777',
    nickname: null,
    status: 'connected',
    previous_status: null,
    reason: null,
    health_score: 100,
    pool_ids: [],
    connector: 'baileys',
    deleted: false,
  };
}
