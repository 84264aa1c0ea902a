import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const projectRoot = path.resolve(__dirname, '../..');
const buildDir = mkdtempSync(path.join(tmpdir(), 'ovn-psample-cmake-'));
const buildTimeoutMs = 600_000;
// Each fuzz target runs this long in CI over the corpus kept in native/fuzz/corpus; campaigns
// (npm run fuzz) run longer and grow that corpus.
const FUZZ_SECONDS_PER_TARGET = 5;

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: projectRoot, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

// Whether the binary carries the sanitizers' runtime hooks: a toolchain that quietly dropped the
// flags would build the same tests uninstrumented, and they would pass without checking anything.
function missingSanitizers(binary: string): string[] {
  const bytes = readFileSync(path.join(buildDir, binary));
  return ['__asan_init', '__ubsan_handle_'].filter((symbol) => !bytes.includes(symbol));
}

function describeFailure(result: SpawnSyncReturns<string>): string {
  return `${result.error?.message ?? `exit ${result.status}`}\n${result.stdout}\n${result.stderr}`;
}

function requireTool(tool: string, aptPackage: string): void {
  const probe = run(tool, ['--version']);
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `${tool} was not found: install it with \`apt-get install ${aptPackage}\` (CI installs cmake clang libclang-rt-14-dev).`,
    );
  }
}

// cmake-js only skips downloading node's headers when nodedir already holds them; node's own
// prefix does on Debian and in node's official tarballs, and keeps the build offline.
function nodeHeadersDir(): string {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (!existsSync(path.join(prefix, 'include/node/node.h'))) {
    throw new Error(
      `node's headers are missing under ${prefix}/include/node: install the node development headers (Debian: the nodejs package ships them).`,
    );
  }
  return prefix;
}

// The native tests always run under AddressSanitizer and UBSan, and the fuzzers always run:
// when clang or its runtimes are missing, the configuration fails with the reason (native/
// CMakeLists.txt), and so does this test. Nothing falls back to an unsanitized run.
describe('native/CMakeLists.txt', () => {
  beforeAll(() => {
    requireTool('cmake', 'cmake');
    requireTool('ctest', 'cmake');
    requireTool('clang++', 'clang');
    const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
    const build = run(
      process.execPath,
      [
        cmakeJs,
        'compile',
        '--directory',
        'native',
        '--out',
        buildDir,
        '--prefer-clang',
        // cmake-js runs one compiler at a time unless told: the sanitized tests and fuzzers are most of this file's time.
        '--parallel',
        String(availableParallelism()),
        '--CDOVNPSAMPLE_SANITIZE=ON',
        '--CDOVNPSAMPLE_FUZZ=ON',
      ],
      { ...process.env, npm_config_nodedir: nodeHeadersDir() },
    );
    if (build.status !== 0) throw new Error(`cmake-js compile failed: ${describeFailure(build)}`);
  }, buildTimeoutMs);

  afterAll(() => {
    rmSync(buildDir, { recursive: true, force: true });
  });

  it('runs the sanitized parser tests and, as root, the kernel tests under ctest, and they pass', () => {
    const cache = run('cmake', ['-L', '-N', buildDir]);
    expect(cache.stdout).toContain('OVNPSAMPLE_SANITIZE:BOOL=ON');
    for (const binary of ['psample_parser_tests', 'group_filter_kernel_test', 'forged_reply_test']) {
      expect(missingSanitizers(binary), `${binary} is not instrumented`).toEqual([]);
    }
    const ctest = run('ctest', ['--test-dir', buildDir, '--output-on-failure']);
    expect(ctest.status, describeFailure(ctest)).toBe(0);
    expect(ctest.stdout).toContain('100% tests passed');
    // Root can make the private network namespace the kernel tests need: none may skip then.
    if (process.getuid?.() === 0) expect(ctest.stdout, ctest.stdout).not.toContain('Skipped');
  });

  it('builds the N-API addon as ovn_psample.node', () => {
    expect(existsSync(path.join(buildDir, 'Release', 'ovn_psample.node'))).toBe(true);
  });

  it(
    `replays every past finding and fuzzes each target for ${FUZZ_SECONDS_PER_TARGET} s without a finding`,
    () => {
      const fuzz = run(process.execPath, [
        'scripts/fuzz.mjs',
        '--build-dir',
        buildDir,
        '--no-update',
        `-max_total_time=${FUZZ_SECONDS_PER_TARGET}`,
        '-seed=1',
      ]);
      expect(fuzz.status, describeFailure(fuzz)).toBe(0);
      const targets = readdirSync(path.join(projectRoot, 'native/fuzz')).flatMap((name) => /^(\w+)_fuzzer\.cc$/.exec(name)?.[1] ?? []);
      expect(targets).toContain('datagram_batch');
      for (const target of targets) {
        expect(missingSanitizers(`${target}_fuzzer`), `${target}_fuzzer is not instrumented`).toEqual([]);
        expect(fuzz.stdout).toMatch(new RegExp(`FUZZ target=${target} executions=[1-9]\\d* seconds=\\S+ findings=0 `));
      }
    },
    buildTimeoutMs,
  );
});
