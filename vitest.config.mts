import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Native sockets, threads and setns need process isolation: forks, never worker threads.
export default defineConfig({
  test: {
    pool: 'forks',
    // Vitest's default, one fewer than the cores, runs one file at a time on a 2-core machine; most
    // files spend their time waiting on what they start (ovsdb-server, the CLI, qemu, sockets).
    maxWorkers: Math.max(2, availableParallelism()),
    include: ['test/**/*.test.ts'],
    // Tiers by name: *.lab.test.ts run in the lab VM (test/config/lab.config.mts), *.overload.test.ts
    // by npm run test:overload (test/config/overload.config.mts).
    exclude: ['**/*.lab.test.ts', '**/*.overload.test.ts', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
