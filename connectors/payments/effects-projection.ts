import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { PaymentRecord } from '../../schemas/records.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { GatewayFailure, topics, type Kafka, type Producer, type TopicSerdes } from '../../topics/index.js';
import { runProjection, type Projection } from '../../processors/index.js';
import { on } from '../../processors/runtime/projection.js';
import { ensureProjectionSchema } from '../../processors/runtime/store.js';
import { startConnectionWriting } from '../../processors/connections/writing.js';
import type { Mailer } from '../email/smtp.js';
import { PaymentEffects } from './effects.js';

const NAME = 'payment_effects';

/**
 * The payments processor's side effects, as a projection of `gw.payments` whose table is the
 * ledger of the records whose effect is applied. A record's effect runs inside the batch's
 * transaction and its id is committed with the offset, so a crash before the commit applies it
 * again (at least once; the plan and the connections write only what differs) and a record seen
 * before, at any offset, applies nothing: a provider's event delivered twice sends one e-mail.
 * It is never replayed: rebuilding the subscription state is the `payments` projection's, and the
 * past's effects are on the log already (the plans on `gw.config`, the connections on theirs).
 */
export function paymentEffectsProjection(effects: Pick<PaymentEffects, 'apply'>): Projection {
  return {
    name: NAME,
    ddl: [
      `CREATE TABLE IF NOT EXISTS applied (
        event_id text PRIMARY KEY,
        account_id text NOT NULL,
        status text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    ],
    handlers: [
      on(topics.payments, async (tx, record) => {
        if (record === null) return;
        const { rowCount } = await tx.query(`INSERT INTO applied (event_id, account_id, status) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
          record.event_id,
          record.account_id,
          record.status,
        ]);
        if (rowCount === 0) return;
        await applyRetried(effects, record);
      }),
    ],
  };
}

/** A payment's effect is never given up on (a paid account left on Free): every failure of it is retried. */
async function applyRetried(effects: Pick<PaymentEffects, 'apply'>, record: PaymentRecord): Promise<void> {
  try {
    await effects.apply(record);
  } catch (error) {
    throw GatewayFailure.retryable(`the effect of payment record ${record.event_id} failed`, error);
  }
}

export interface PaymentEffectsRoleDeps {
  readonly kafka: Kafka;
  readonly serdes: TopicSerdes;
  readonly pool: Pool;
  readonly producer: Producer;
  readonly logger: Logger;
  readonly mailer: Pick<Mailer, 'send'>;
  readonly clock?: Clock;
}

/** Runs the payment effects in the processor role, with the views and the connection writer they need. */
export async function startPaymentEffects(deps: PaymentEffectsRoleDeps): Promise<{ stop(): Promise<void> }> {
  const clock = deps.clock ?? systemClock;
  const { directory, connections, writer, stop } = await startConnectionWriting(deps, clock);
  const effects = new PaymentEffects({
    kafka: deps.kafka,
    producer: deps.producer,
    prefix: deps.serdes.prefix,
    directory,
    connections,
    writer,
    mailer: deps.mailer,
    clock,
  });
  const running = await runProjection(deps, paymentEffectsProjection(effects));
  return {
    async stop() {
      await running.stop();
      await stop();
    },
  };
}

/** Creates the ledger's table, so the API may wait on it before any processor has run. */
export async function ensurePaymentEffectsSchema(pool: Pool): Promise<void> {
  await ensureProjectionSchema(pool, paymentEffectsProjection({ apply: async () => undefined }), NAME);
}

/**
 * Resolves true once the processor has applied the effect of the record `recordId`, false when
 * `timeoutMs` passed first (the effect follows whenever a processor runs).
 */
export async function effectApplied(pool: Pool, recordId: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    const { rowCount } = await pool.query(`SELECT 1 FROM ${NAME}.applied WHERE event_id = $1`, [recordId]);
    if (rowCount !== 0) return true;
    if (Date.now() + delay > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
