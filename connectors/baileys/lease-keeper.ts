import type { Logger } from 'pino';
import type { Lease, NumberLeases } from './lease.js';

/**
 * Renews `lease` every period, one renewal at a time, and calls `lost` once: when another worker
 * holds the lease, or when no renewal went through for two periods (before the lease can expire
 * unrenewed on the database's clock). Returns what stops the renewals.
 */
export function keepLease(leases: NumberLeases, lease: Lease, periodMs: number, logger: Logger, lost: (why: string) => void): () => void {
  let renewing = false;
  let ended = false;
  const end = (why?: string) => {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    if (why !== undefined) lost(why);
  };
  const timer = setInterval(() => {
    if (performance.now() + periodMs >= lease.validUntil) return end('lease not renewed in time');
    if (renewing) return;
    renewing = true;
    leases
      .renew(lease)
      .then(
        (kept) => kept || end('lease taken by another worker'),
        (err: unknown) => logger.warn({ err }, 'lease renewal failed'),
      )
      .finally(() => (renewing = false));
  }, periodMs);
  timer.unref();
  return () => end();
}
