// Prints the per-test results the guest's vitest wrote (JSON reporter) and
// exits non-zero when any test failed, or when there are no results at all:
// a guest that crashed must not look like a guest whose tests passed.
import { readFileSync } from 'node:fs';

const [resultsPath, exitCodePath] = process.argv.slice(2);
if (!resultsPath || !exitCodePath) {
  console.error('usage: node report.mjs RESULTS_JSON VITEST_EXIT_CODE_FILE');
  process.exit(2);
}

function readOrNull(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

const raw = readOrNull(resultsPath);
const exitCode = readOrNull(exitCodePath)?.trim();
if (raw === null) {
  console.error(`lab: no test results at ${resultsPath}: the guest did not finish vitest (see the console log)`);
  process.exit(1);
}

const results = JSON.parse(raw);
const counts = { passed: 0, failed: 0, skipped: 0 };
for (const file of results.testResults ?? []) {
  const name = file.name.replace(/^.*\/test\//, 'test/');
  const tests = file.assertionResults ?? [];
  // A failing beforeAll fails the file and leaves its tests merely skipped: count the file.
  if (file.status === 'failed' && !tests.some((test) => test.status === 'failed')) {
    counts.failed += 1;
    console.log(`FAIL  ${name}: ${(file.message || 'the file failed outside its tests').split('\n')[0]}`);
  }
  for (const test of tests) {
    const status = test.status === 'passed' ? 'PASS' : test.status === 'failed' ? 'FAIL' : 'SKIP';
    if (status === 'PASS') counts.passed += 1;
    else if (status === 'FAIL') counts.failed += 1;
    else counts.skipped += 1;
    const ms = typeof test.duration === 'number' ? ` (${Math.round(test.duration)} ms)` : '';
    console.log(`${status}  ${name} > ${test.fullName}${ms}`);
    for (const message of status === 'FAIL' ? (test.failureMessages ?? []) : []) {
      console.log(`      ${message.split('\n').slice(0, 8).join('\n      ')}`);
    }
  }
}
console.log(`lab: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped (vitest exit ${exitCode ?? 'unknown'})`);
const ok = counts.failed === 0 && counts.passed > 0 && exitCode === '0';
process.exit(ok ? 0 : 1);
