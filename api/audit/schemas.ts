import { Type } from '@sinclair/typebox';
import type { AuditRow } from '../../processors/audit/index.js';
import { Cursor, Limit, NextCursor } from '../conversations/cursor.js';

export const AuditQuery = Type.Object({
  action: Type.Optional(Type.String({ maxLength: 60, pattern: '^[a-z_]+\\.[a-z_]+$', description: 'Only this action (key.revoked, partner.deactivated, …)' })),
  limit: Limit,
  cursor: Type.Optional(Cursor),
});

export const AuditEntryOut = Type.Object({
  id: Type.String(),
  action: Type.String({ description: 'resource.verb: key.created, key.rotated, key.revoked, user.added, user.removed, connection.disconnected, number.unlinked, number.renamed, number.removed, partner.changed, partner.secret_rotated, partner.webhook_secret_rotated, partner.deactivated, partner.activated' }),
  target_id: Type.String(),
  actor: Type.Object({
    kind: Type.String({ description: 'api_key, panel_user or platform_admin' }),
    id: Type.String({ description: 'The key id, or the e-mail of the panel user or administrator' }),
  }),
  ip: Type.String(),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  occurred_at: Type.String({ format: 'date-time' }),
});

export const AuditPageOut = Type.Object({ data: Type.Array(AuditEntryOut), next_cursor: NextCursor });

export function auditEntryOut(row: AuditRow) {
  return {
    id: row.entry_id,
    action: row.action,
    target_id: row.target_id,
    actor: { kind: row.actor_kind, id: row.actor_id },
    ip: row.ip,
    user_agent: row.user_agent,
    occurred_at: row.occurred_at.toISOString(),
  };
}
