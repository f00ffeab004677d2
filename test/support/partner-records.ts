import { randomUUID } from 'node:crypto';
import { asAccountId, asEventId, asProjectId, type ConnectionId, type PartnerId } from '../../schemas/ids.js';
import type { ConfigRecord, ConnectionStatus, ConnectionTransition, Partner } from '../../schemas/records.js';

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
