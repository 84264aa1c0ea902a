import { defineConfig } from 'vitest/config';

// Native sockets, threads and setns need process isolation: forks, never worker threads.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // Tiers by name: *.lab.test.ts run in the lab VM (test/config/lab.config.mts), *.overload.test.ts
    // by npm run test:overload (test/config/overload.config.mts).
    exclude: ['**/*.lab.test.ts', '**/*.overload.test.ts', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
