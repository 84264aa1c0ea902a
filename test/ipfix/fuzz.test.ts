// The IPFIX fuzz campaign (npm run fuzz:ipfix) for a few seconds on every test run, over the build.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

it('fuzz:ipfix for 5 s finds nothing', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    path.join(__dirname, '..', '..', 'scripts', 'fuzz-ipfix.mjs'),
    '--seconds',
    '5',
  ]);
  expect(stdout).toMatch(/^FUZZ target=ipfix executions=[1-9]\d* seconds=[\d.]+ findings=0 /m);
});
