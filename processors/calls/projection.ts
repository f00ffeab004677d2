import { topics } from '../../topics/index.js';
import { on, type Projection } from '../runtime/projection.js';

/**
 * The call log: one row per call of a number, as its facts on `gw.calls` move it (offer, ringing,
 * then one end: timeout, reject, accept, terminate). The first fact sets who called and when.
 */
export const callsProjection: Projection = {
  name: 'calls',
  ddl: [
    `CREATE TABLE IF NOT EXISTS log (
      instance_id text NOT NULL,
      call_id text NOT NULL,
      account_id text NOT NULL,
      project_id text NOT NULL,
      caller_jid text NOT NULL,
      caller_lid text,
      caller_phone text,
      is_video boolean NOT NULL,
      group_jid text,
      status text NOT NULL,
      offline boolean NOT NULL,
      rejected_by_us boolean NOT NULL,
      started_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      last_event_id text NOT NULL,
      PRIMARY KEY (instance_id, call_id)
    )`,
    `CREATE INDEX IF NOT EXISTS log_by_project ON log (project_id, started_at DESC, call_id)`,
  ],
  handlers: [
    on(topics.calls, async (tx, fact) => {
      if (fact === null) return;
      const at = new Date(fact.occurred_at);
      await tx.query(
        `INSERT INTO log (instance_id, call_id, account_id, project_id, caller_jid, caller_lid, caller_phone, is_video,
                          group_jid, status, offline, rejected_by_us, started_at, updated_at, last_event_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14)
         ON CONFLICT (instance_id, call_id) DO UPDATE SET
           status = EXCLUDED.status, rejected_by_us = log.rejected_by_us OR EXCLUDED.rejected_by_us,
           is_video = log.is_video OR EXCLUDED.is_video, caller_phone = COALESCE(log.caller_phone, EXCLUDED.caller_phone),
           updated_at = EXCLUDED.updated_at, last_event_id = EXCLUDED.last_event_id`,
        [
          fact.instance_id, fact.call_id, fact.account_id, fact.project_id, fact.caller.jid, fact.caller.lid, fact.caller.phone,
          fact.is_video, fact.group_jid, fact.status, fact.offline, fact.by_us, at, fact.event_id,
        ],
      );
    }),
  ],
};
