import { defineConfig } from 'vitest/config';

// npm run test:overload: minutes of floods that take the machine's cores. They run on their own,
// after the other suites, so they neither slow those down nor are slowed down by them.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    pool: 'forks',
    fileParallelism: false,
    include: ['test/**/*.overload.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
