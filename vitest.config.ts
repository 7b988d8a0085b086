import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['server/test/**/*.test.ts'],
    globalSetup: ['server/test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file gets its own database; two files at a time suits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
  },
});
