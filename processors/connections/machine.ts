import { randomUUID } from 'node:crypto';
import { asEventId, newId, type AccountId, type ConnectionId, type InstanceId, type PartnerId, type ProjectId } from '../../schemas/ids.js';
import type { ConnectionStatus, ConnectionTransition, Customer, RevokedBy } from '../../schemas/records.js';
import type { ConnectionEntry } from './view.js';

/** Why a step of the flow is refused; the values are the spec's error codes (section 7). */
export type RefusalCode = 'connection_revoked' | 'account_required' | 'payment_required' | 'number_required' | 'connection_not_active';

/** What the world looks like for a connection's checks: read from the directory by the writer. */
export interface Standing {
  /** The linked account's plan includes the partner channel (Pro paid). */
  readonly planPaid: boolean;
  readonly accountExists: boolean;
  readonly projectExists: boolean;
}

export type ConnectionInput =
  | { readonly kind: 'open'; readonly partnerId: PartnerId; readonly externalId: string; readonly customer: Customer }
  | { readonly kind: 'link'; readonly accountId: AccountId; readonly projectId: ProjectId; readonly planPaid: boolean }
  | { readonly kind: 'check'; readonly trigger: CheckTrigger; readonly standing: Standing }
  | { readonly kind: 'complete'; readonly instanceId: InstanceId; readonly planPaid: boolean; readonly hasConnectedNumber: boolean }
  | { readonly kind: 'revoke'; readonly by: RevokedBy };

export type CheckTrigger = 'sweep' | 'plan_change' | 'key_call' | 'payment';

export type Decision =
  | { readonly kind: 'write'; readonly record: ConnectionTransition }
  | { readonly kind: 'same'; readonly entry: ConnectionEntry }
  | { readonly kind: 'refused'; readonly code: RefusalCode };

/**
 * The connection state machine of spec 3.1, with our choices where it is silent (docs/connect.md):
 * a revoked connection reopens at `pending_account` on a new session (same id); the partner may
 * revoke from any state, the customer from `active` or `suspended`; a deleted account or
 * project revokes from any state that has it. Each record repeats the whole connection.
 */
export function decide(current: ConnectionEntry | undefined, input: ConnectionInput, now: number): Decision {
  if (input.kind === 'open') return open(current, input, now);
  if (current === undefined) throw new Error('a connection must be opened before anything else happens to it');
  const same: Decision = { kind: 'same', entry: current };
  switch (input.kind) {
    case 'link':
      if (current.to_status === 'revoked') return { kind: 'refused', code: 'connection_revoked' };
      if (current.to_status !== 'pending_account') return same;
      return write(current, input.planPaid ? 'pending_number' : 'pending_payment', 'account_linked', now, {
        account_id: input.accountId,
        project_id: input.projectId,
      });
    case 'check':
      return check(current, input.trigger, input.standing, now);
    case 'complete':
      if (current.to_status === 'revoked') return { kind: 'refused', code: 'connection_revoked' };
      if (current.to_status === 'active') return same;
      if (current.to_status === 'pending_account') return { kind: 'refused', code: 'account_required' };
      if (current.to_status !== 'pending_number' || !input.planPaid) return { kind: 'refused', code: 'payment_required' };
      if (!input.hasConnectedNumber) return { kind: 'refused', code: 'number_required' };
      return write(current, 'active', 'completed', now, { instance_id: input.instanceId });
    case 'revoke':
      return revoke(current, input.by, now);
  }
}

function open(current: ConnectionEntry | undefined, input: Extract<ConnectionInput, { kind: 'open' }>, now: number): Decision {
  if (current === undefined) {
    return {
      kind: 'write',
      record: {
        event_id: asEventId(newId('cnx')),
        occurred_at: now,
        account_id: null,
        project_id: null,
        instance_id: null,
        connection_id: randomUUID() as ConnectionId,
        partner_id: input.partnerId,
        external_id: input.externalId,
        from_status: null,
        to_status: 'pending_account',
        trigger: 'session_opened',
        customer: input.customer,
        revoked_by: null,
        created_at: now,
        activated_at: null,
        suspended_at: null,
        revoked_at: null,
      },
    };
  }
  if (current.to_status === 'revoked') {
    return write(current, 'pending_account', 'session_reopened', now, {
      customer: input.customer,
      account_id: null,
      project_id: null,
      instance_id: null,
      revoked_by: null,
    });
  }
  // Spec 4.4 rule 3: the partner's data pre-fills the flow until the account is linked, then belongs to the customer.
  if (current.to_status !== 'pending_account' || sameCustomer(current.customer, input.customer)) return { kind: 'same', entry: current };
  return write(current, 'pending_account', 'customer_updated', now, { customer: input.customer });
}

function check(current: ConnectionEntry, trigger: CheckTrigger, standing: Standing, now: number): Decision {
  const status = current.to_status;
  if (status === 'revoked') return { kind: 'same', entry: current };
  if (current.account_id !== null && !standing.accountExists) return revoke(current, 'account_deleted', now);
  if (current.project_id !== null && !standing.projectExists) return revoke(current, 'project_deleted', now);
  if (status === 'pending_payment' && standing.planPaid) return write(current, 'pending_number', 'payment_confirmed', now);
  if (status === 'active' && !standing.planPaid) return write(current, 'suspended', trigger, now);
  if (status === 'suspended' && standing.planPaid) return write(current, 'active', trigger, now);
  return { kind: 'same', entry: current };
}

function revoke(current: ConnectionEntry, by: RevokedBy, now: number): Decision {
  if (current.to_status === 'revoked') return { kind: 'same', entry: current };
  if (by === 'customer' && current.to_status !== 'active' && current.to_status !== 'suspended') {
    return { kind: 'refused', code: 'connection_not_active' };
  }
  const trigger = by === 'partner' ? 'partner_delete' : by === 'customer' ? 'customer_disconnect' : by;
  // The record keeps the account and project it had, so connect.revoked reaches that project's
  // partner webhook; every public view drops them once revoked (spec 3.1 rule 2).
  return write(current, 'revoked', trigger, now, { revoked_by: by });
}

/** Transitions that announce a connect.* event get an `evt_` id: it becomes the public event id. */
const announced = (from: ConnectionStatus, to: ConnectionStatus): boolean =>
  (from === 'pending_number' && to === 'active') || (from === 'active' && to === 'suspended') || (from === 'suspended' && to === 'active') || to === 'revoked';

function write(current: ConnectionEntry, to: ConnectionStatus, trigger: string, now: number, patch: Partial<ConnectionTransition> = {}): Decision {
  const from = current.to_status;
  return {
    kind: 'write',
    record: {
      ...current,
      ...patch,
      event_id: asEventId(newId(announced(from, to) ? 'evt' : 'cnx')),
      occurred_at: now,
      from_status: from,
      to_status: to,
      trigger,
      activated_at: to === 'active' ? now : current.activated_at,
      suspended_at: to === 'suspended' ? now : current.suspended_at,
      revoked_at: to === 'revoked' ? now : current.revoked_at,
    },
  };
}

function sameCustomer(a: Customer, b: Customer): boolean {
  return a.name === b.name && a.email === b.email && a.company === b.company && a.phone === b.phone && a.country === b.country && a.locale === b.locale;
}

/** The public status and ids of a connection (spec 2.6): a revoked one has lost its account and project. */
export function publicLink(entry: ConnectionEntry): { account_id: string | null; project_id: string | null } {
  return entry.to_status === 'revoked' ? { account_id: null, project_id: null } : { account_id: entry.account_id, project_id: entry.project_id };
}
