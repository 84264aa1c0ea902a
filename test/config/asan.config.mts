import { defineConfig } from 'vitest/config';

// npm run test:asan (scripts/sanitizers.mjs): the kernel-socket test files, the packet JSON and
// text golden corpora (every input through the addon's packetJson and packetText, every golden
// message through both line formats) and the line renderer handed lying batches, against the
// addon built with AddressSanitizer and UBSan. asan-setup.ts makes sure each test process really runs it.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    pool: 'forks',
    include: [
      'test/**/*.kernel.test.ts',
      'test/packet/packet-json-golden.test.ts',
      'test/output/text-golden.test.ts',
      'test/output/sample-json-native.test.ts',
    ],
    setupFiles: ['test/support/asan-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
