import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/stack.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Integration files share one stack but isolate themselves by database and topic prefix.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
