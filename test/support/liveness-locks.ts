import { PROCESS_LOCKS } from '../../stack/member-liveness.js';

/** The liveness locks of this database's gateway processes, beside their rows (`p`); `l.pid` is the Postgres backend holding one. */
export const LIVENESS_LOCKS = `gateway_processes p JOIN pg_locks l ON l.locktype = 'advisory' AND l.classid = ${PROCESS_LOCKS} AND l.objsubid = 2 AND l.objid = p.lock_id::oid
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
