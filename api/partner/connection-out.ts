import { Type } from '@sinclair/typebox';
import type { Pool } from 'pg';
import type { ConnectionEntry } from '../../processors/connections/view.js';
import { projectInstances } from '../../processors/instances/queries.js';
import { isoTime } from '../../shared/iso-time.js';

export const NumberOut = Type.Object({ id: Type.String(), phone: Type.Union([Type.String(), Type.Null()]), status: Type.String() });

const nullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** Spec 2.6. A revoked connection has lost its account and project, so they are absent. */
export const ConnectionOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  external_id: Type.String(),
  status: Type.String({ description: 'pending_account, pending_payment, pending_number, active, suspended or revoked' }),
  account_id: Type.Optional(Type.String()),
  project_id: Type.Optional(Type.String()),
  customer: Type.Object({
    name: Type.Union([Type.String(), Type.Null()]),
    email: Type.String(),
    company: Type.Union([Type.String(), Type.Null()]),
    phone: Type.Union([Type.String(), Type.Null()]),
    country: Type.Union([Type.String(), Type.Null()]),
    locale: Type.Union([Type.String(), Type.Null()]),
  }),
  numbers: Type.Array(NumberOut),
  revoked_by: Type.Optional(Type.String()),
  activated_at: nullableTime,
  suspended_at: nullableTime,
  revoked_at: nullableTime,
  created_at: Type.String({ format: 'date-time' }),
});


/** The numbers of the connection's project now: {id, phone, status}. */
export async function connectionNumbers(pool: Pool, connection: ConnectionEntry): Promise<{ id: string; phone: string | null; status: string }[]> {
  if (connection.to_status === 'revoked' || connection.project_id === null) return [];
  const rows = await projectInstances(pool, connection.project_id);
  return rows.map((row) => ({ id: row.instance_id, phone: row.phone, status: row.status }));
}

export async function connectionOut(pool: Pool, connection: ConnectionEntry) {
  const linked = connection.to_status !== 'revoked';
  return {
    id: connection.connection_id,
    external_id: connection.external_id,
    status: connection.to_status,
    ...(linked && connection.account_id !== null ? { account_id: connection.account_id } : {}),
    ...(linked && connection.project_id !== null ? { project_id: connection.project_id } : {}),
    customer: { ...connection.customer },
    numbers: await connectionNumbers(pool, connection),
    ...(connection.to_status === 'revoked' && connection.revoked_by !== null ? { revoked_by: connection.revoked_by } : {}),
    activated_at: isoTime(connection.activated_at),
    suspended_at: isoTime(connection.suspended_at),
    revoked_at: isoTime(connection.revoked_at),
    created_at: new Date(connection.created_at).toISOString(),
  };
}
