import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { asEventId, newId } from '../../schemas/ids.js';
import type { AuditRecord } from '../../schemas/records.js';
import { withDeadline } from '../../shared/deadline.js';
import { topics, type Producer } from '../../topics/index.js';
import { WRITE_DEADLINE_MS } from '../config-writes.js';

/** What an audited route did, and where its target's id is: the path's `:id`, or the answer's `id` for a creation. */
export interface AuditSpec {
  readonly action: string;
  readonly target: 'param' | 'answer';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An audited action: a `gw.audit` entry is written once it succeeded, before the answer leaves. */
    audit?: AuditSpec;
  }
}

const USER_AGENT_CHARS = 200;

function targetOf(spec: AuditSpec, request: FastifyRequest, payload: unknown): string | undefined {
  if (spec.target === 'param') return (request.params as { id?: string } | undefined)?.id;
  if (typeof payload !== 'string' || payload === '') return undefined;
  try {
    const id = (JSON.parse(payload) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Who acted: a platform administrator, a panel user (their cookie stands for a key named after them) or a key. */
function actorOf(request: FastifyRequest): Pick<AuditRecord, 'actor_kind' | 'actor_id' | 'account_id'> {
  const admin = (request as { platformAdmin?: { email: string } }).platformAdmin;
  if (admin !== undefined) return { actor_kind: 'platform_admin', actor_id: admin.email, account_id: null };
  const auth = (request as { auth?: FastifyRequest['auth'] }).auth;
  if (auth === undefined) return { actor_kind: 'api_key', actor_id: 'unknown', account_id: null };
  const panelUser = auth.keyId.startsWith('panel:') ? auth.keyId.slice('panel:'.length) : undefined;
  return panelUser === undefined
    ? { actor_kind: 'api_key', actor_id: auth.keyId, account_id: auth.accountId }
    : { actor_kind: 'panel_user', actor_id: panelUser, account_id: auth.accountId };
}

/**
 * The audit trail (`gw.audit`): every route with `config.audit` writes who did it, when and from
 * where once it succeeded (2xx), before its answer leaves. The action's own record is already on
 * the log then; a process killed between the two loses that entry, and a log that refuses the
 * entry turns the answer into an error, so a client never gets a success that was not audited.
 */
export const auditTrailPlugin = fp<{ readonly producer: Producer; readonly clock: () => number }>(async (app, { producer, clock }) => {
  app.addHook('onSend', async (request, reply, payload) => {
    const spec = request.routeOptions.config.audit;
    if (spec === undefined || reply.statusCode >= 300) return payload;
    const target = targetOf(spec, request, payload);
    if (target === undefined) return payload;
    const userAgent = request.headers['user-agent'];
    const record: AuditRecord = {
      event_id: asEventId(newId('aud')),
      occurred_at: clock(),
      ...actorOf(request),
      action: spec.action,
      target_id: target,
      ip: request.ip,
      user_agent: userAgent === undefined ? null : userAgent.slice(0, USER_AGENT_CHARS),
    };
    await withDeadline(producer.send(topics.audit, [{ key: record.account_id ?? 'platform', value: record }]), WRITE_DEADLINE_MS);
    return payload;
  });
});
