import { defineConfig } from 'vitest/config';

/**
 * Integration files that load the machine (role processes, a second broker or a cluster, a
 * browser, a backlog) or that kill, stall or time what they watch: they run one at a time, after
 * the others, which run two at once (development.md: how long the suite takes).
 */
const alone = [
  'baileys-auth-store', 'baileys-fencing', 'baileys-restart', 'backlog', 'broker-outage', 'campaign-e2e', 'cli', 'cluster',
  'dead-members', 'dispatcher-backlog', 'dispatcher', 'events-processor', 'gateway-mode', 'gateway-sigterm', 'group-timing',
  'kafka-idle', 'payments-processor', 'poison', 'process-fence', 'processor', 'producer-limits', 'registry', 'relay',
  'replay-all', 'replay-members', 'sandbox-receipts', 'stack', 'start', 'static-membership', 'usage-replay',
].map((name) => `test/integration/${name}.test.ts`);

const onTheStack = {
  // One stack for the whole run; files isolate themselves by database and topic prefix.
  globalSetup: ['test/setup/stack.ts'],
  testTimeout: 120_000,
  hookTimeout: 300_000,
};

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { test: { name: 'integration', include: ['test/integration/**/*.test.ts'], exclude: alone, maxWorkers: 2, sequence: { groupOrder: 0 }, ...onTheStack } },
      { test: { name: 'alone', include: [...alone, 'test/browser/**/*.test.ts'], maxWorkers: 1, sequence: { groupOrder: 1 }, ...onTheStack } },
    ],
  },
});
