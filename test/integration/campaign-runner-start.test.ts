import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAutopilot, startCampaignRunner } from '../../processors/campaigns/index.js';
import { startDirectory } from '../../processors/directory.js';
import type { Clients } from '../../stack/clients.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';

/**
 * The campaign runner started on a new database, before the campaigns projection has created its
 * tables (they start side by side in a processor), ticks without failing. Its first ticks used to
 * fail with `relation "campaigns.campaigns" does not exist`, logged as a warning at every first start.
 */
describe('the campaign runner on a new database', () => {
  let env: TestEnv;
  let clients: Clients;

  beforeAll(async () => {
    env = await createTestEnv();
    clients = await testClients(env);
  });

  afterAll(async () => {
    await clients?.close();
    await env?.dispose();
  });

  it('ticks without failing before any projection has run', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const started = await startDirectory(clients);
    const runner = await startCampaignRunner({ ...clients, logger, directory: started.directory, watch: createAutopilot(), tickMs: 20 });
    try {
      await waitFor('the runner owning its partitions', () => lines.some((line) => line.msg === 'campaign partitions owned') || undefined, { timeoutMs: 60_000 });
      const { rows } = await clients.pool.query<{ table: string | null }>(`SELECT to_regclass('campaigns.campaigns')::text AS table`);
      expect(rows[0]?.table).toBe('campaigns.campaigns');
      expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([]);
    } finally {
      await runner.stop();
      await started.stop();
    }
  }, 120_000);
});
