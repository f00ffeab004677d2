import { randomUUID } from 'node:crypto';
import { asAccountId, asEventId, asProjectId, type ConnectionId, type PartnerId } from '../../schemas/ids.js';
import type { ConfigRecord, ConnectionStatus, ConnectionTransition, Partner } from '../../schemas/records.js';
import { issueKey } from '../../processors/config/keys.js';
import type { ConnectionsView } from '../../processors/connections/view.js';
import type { Directory } from '../../processors/directory.js';
import { includesConnect } from '../../processors/usage/plans.js';
import type { Clients } from '../../stack/clients.js';
import { topics } from '../../topics/index.js';

/**
 * Partners and connections written straight to `gw.config` and `gw.connections`, as the platform
 * routes and the connection writer write them, for tests of what reads them (the dispatcher).
 */

export function partnerRecord(id: string, entity: Partial<Omit<Partner, 'kind'>> = {}): ConfigRecord {
  return {
    event_id: asEventId(`cfg_${randomUUID().replaceAll('-', '')}`),
    occurred_at: Date.now(),
    account_id: null,
    project_id: null,
    instance_id: null,
    entity_id: id,
    entity: {
      kind: 'partner',
      slug: id.replace(/^ptn_/, ''),
      name: `Partner ${id}`,
      logo_url: null,
      allowed_origins: ['https://app.example.com'],
      webhook_url: null,
      key_scopes: ['messages:send'],
      secret_hash: `hash_${id}`,
      webhook_secret_ciphertext: null,
      active: true,
      ...entity,
    },
  };
}

export interface ConnectionFields {
  readonly id: string;
  readonly partnerId: string;
  readonly externalId: string;
  readonly accountId: string | null;
  readonly projectId: string | null;
  readonly status: ConnectionStatus;
  readonly from?: ConnectionStatus | null;
  readonly trigger?: string;
  readonly eventId?: string;
}

/** The full state of a connection after one transition (the record keyed by the connection id). */
export function connectionRecord(c: ConnectionFields): ConnectionTransition {
  const now = Date.now();
  return {
    event_id: asEventId(c.eventId ?? `evt_${randomUUID().replaceAll('-', '')}`),
    occurred_at: now,
    account_id: c.accountId === null ? null : asAccountId(c.accountId),
    project_id: c.projectId === null ? null : asProjectId(c.projectId),
    instance_id: null,
    connection_id: c.id as ConnectionId,
    partner_id: c.partnerId as PartnerId,
    external_id: c.externalId,
    from_status: c.from ?? null,
    to_status: c.status,
    trigger: c.trigger ?? 'completed',
    customer: { name: 'Ana', email: `${c.externalId}@customer.example.com`, company: 'Ana Ltda', phone: null, country: 'BR', locale: 'pt-BR' },
    revoked_by: c.status === 'revoked' ? 'partner' : null,
    created_at: now - 60_000,
    activated_at: c.status === 'active' || c.status === 'suspended' ? now : null,
    suspended_at: c.status === 'suspended' ? now : null,
    revoked_at: c.status === 'revoked' ? now : null,
  };
}

/**
 * A key issued through an active partner connection of the project, as the exchange issues it:
 * its partner and connection are written too, and the account made Pro (a connection of an
 * account without Pro is suspended on the key's first call). Resolves once `api` sees all of it.
 */
export async function partnerIssuedKey(
  clients: Pick<Clients, 'producer'>,
  api: { readonly directory: Directory; readonly connections: ConnectionsView },
  input: { accountId: string; projectId: string; scopes: readonly string[] },
): Promise<string> {
  const partnerId = `ptn_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const connection = connectionRecord({ id: randomUUID(), partnerId, externalId: `cus-${partnerId}`, accountId: input.accountId, projectId: input.projectId, status: 'active' });
  const account = api.directory.accounts.get(input.accountId);
  if (account === undefined) throw new Error(`account ${input.accountId} is not in the directory yet`);
  const { id: _, ...fields } = account;
  const plan = includesConnect(fields.plan) ? fields.plan : 'pro';
  const pro: ConfigRecord = {
    event_id: asEventId(`cfg_${randomUUID().replaceAll('-', '')}`),
    occurred_at: Date.now(),
    account_id: asAccountId(input.accountId),
    project_id: null,
    instance_id: null,
    entity_id: input.accountId,
    entity: { kind: 'account', ...fields, plan },
  };
  const issued = issueKey({
    accountId: asAccountId(input.accountId),
    projectId: asProjectId(input.projectId),
    role: 'agent',
    scopes: input.scopes,
    connectionId: connection.connection_id,
  });
  await clients.producer.send(topics.config, [partnerRecord(partnerId), pro, issued.record].map((value) => ({ key: value.entity_id, value })));
  await clients.producer.send(topics.connections, [{ key: connection.connection_id, value: connection }]);
  await api.directory.until(() => api.directory.key(issued.id) !== undefined && api.directory.partners.has(partnerId) && api.directory.accounts.get(input.accountId)?.plan === plan, 15_000);
  await api.connections.until(() => api.connections.get(connection.connection_id) !== undefined, 15_000);
  return issued.apiKey;
}
