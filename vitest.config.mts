import { defineConfig } from 'vitest/config';

// Native sockets, threads and setns need process isolation: forks, never worker threads.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    exclude: ['test/lab/**', 'test/overload/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
