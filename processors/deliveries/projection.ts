import { topics } from '../../topics/index.js';
import { onBatch, valuesOf, type Projection } from '../runtime/projection.js';
import { recordAttempts } from './store.js';

/**
 * The delivery history users read at `GET /webhooks/{id}/deliveries`: every `DeliveryAttempt` of
 * `gw.deliveries.attempts` once (keyed by its attempt id), and one row per delivery (one event to
 * one target) summing up its attempts. A pure function of the log, so it can be replayed.
 */
export const deliveriesProjection: Projection = {
  name: 'deliveries',
  ddl: [
    `CREATE TABLE IF NOT EXISTS attempts (
      attempt_id text PRIMARY KEY,
      delivery_id text NOT NULL,
      attempt integer NOT NULL,
      occurred_at timestamptz NOT NULL,
      url text NOT NULL,
      outcome text NOT NULL,
      response_status integer,
      response_body_excerpt text,
      error text,
      duration_ms integer NOT NULL,
      next_attempt_at timestamptz
    )`,
    `CREATE INDEX IF NOT EXISTS attempts_of_delivery ON attempts (delivery_id, attempt, occurred_at)`,
    `CREATE TABLE IF NOT EXISTS deliveries (
      delivery_id text PRIMARY KEY,
      target_kind text NOT NULL,
      target_id text NOT NULL,
      account_id text NOT NULL,
      project_id text,
      instance_id text,
      event_id text NOT NULL,
      event_type text NOT NULL,
      trigger text NOT NULL,
      body_json text,
      created_at timestamptz NOT NULL,
      attempts integer NOT NULL,
      delivered boolean NOT NULL,
      last_attempt integer NOT NULL,
      last_attempt_id text NOT NULL,
      last_attempt_at timestamptz NOT NULL,
      last_url text NOT NULL,
      last_outcome text NOT NULL,
      last_response_status integer,
      last_response_excerpt text,
      last_error text,
      next_attempt_at timestamptz,
      status text NOT NULL GENERATED ALWAYS AS (
        CASE WHEN delivered THEN 'delivered' WHEN next_attempt_at IS NULL THEN 'failed' ELSE 'pending' END
      ) STORED
    )`,
    `CREATE INDEX IF NOT EXISTS deliveries_newest ON deliveries (target_id, created_at DESC, delivery_id DESC)`,
    `CREATE INDEX IF NOT EXISTS deliveries_by_status ON deliveries (target_id, status, created_at DESC, delivery_id DESC)`,
  ],
  handlers: [onBatch(topics.deliveryAttempts, (tx, attempts) => recordAttempts(tx, valuesOf(attempts)))],
};
