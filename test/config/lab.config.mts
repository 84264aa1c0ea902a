import { defineConfig } from 'vitest/config';

// Runs inside the lab guest (scripts/lab/guest/run.sh). The lab files share one
// kernel, one Open vSwitch and one OVN: they run one at a time, in one process
// (under TCG, importing the project again for every file would cost ~20 s each).
// Results go to the payload disk as JSON so the host can print them per test.
const outDir = process.env.OVN_PSAMPLE_LAB_OUT ?? '.lab/out';

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    isolate: false,
    include: ['test/**/*.lab.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ['default', 'json'],
    outputFile: { json: `${outDir}/results.json` },
  },
});
