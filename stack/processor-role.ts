import { startPaymentEffects } from '../connectors/payments/effects-projection.js';
import { startAnalyticsWriters } from '../processors/analytics/index.js';
import { createAutopilot, startCampaignRunner } from '../processors/campaigns/index.js';
import { startDirectory } from '../processors/directory.js';
import { projectionsFor, runProjection, seedChangelogs } from '../processors/index.js';
import { startUsageWriter } from '../processors/usage/index.js';
import type { Clients } from './clients.js';
import { allSettled } from '../shared/all-settled.js';

/** The processor role: the live projections, the campaign runner, the usage and analytics writers and the payment effects. */
export async function startProcessor(clients: Clients): Promise<{ stop(): Promise<void> }> {
  const { logger } = clients;
  const seeded = await seedChangelogs(clients);
  if (seeded.contacts + seeded.messages > 0) logger.info(seeded, 'contacts and messages written to their changelogs for the first time');
  // The campaign watch (safety autopilot) sees the campaigns projection's facts and is asked by the runner.
  const watch = createAutopilot();
  // Side by side: each consumer's join waits for its group to rebalance, and a new processor should work soon.
  const [projections, [directory, runner], ...writers] = await Promise.all([
    Promise.all([...projectionsFor({ ...clients, watch }, 'live').values()].map((projection) => runProjection(clients, projection))),
    startDirectory(clients).then(async (started) => [started, await startCampaignRunner({ ...clients, directory: started.directory, watch })] as const),
    startUsageWriter(clients),
    startAnalyticsWriters(clients),
    startPaymentEffects(clients),
  ]);
  return {
    // Every group at once, so a stopped processor is out of all of them in the time of the slowest
    // (one after another, its twenty groups took 1.5-3 s to leave); the runner before the directory it reads.
    async stop() {
      try {
        await allSettled([...projections, ...writers, runner].map((part) => part.stop()));
      } finally {
        await directory.stop();
      }
    },
  };
}
