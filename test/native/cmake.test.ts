import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const projectRoot = path.resolve(__dirname, '../..');
const buildDir = mkdtempSync(path.join(tmpdir(), 'ovn-psample-cmake-'));
const scratchDir = mkdtempSync(path.join(tmpdir(), 'ovn-psample-probe-'));
const buildTimeoutMs = 600_000;

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: projectRoot, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function describeFailure(result: SpawnSyncReturns<string>): string {
  return `${result.error?.message ?? `exit ${result.status}`}\n${result.stdout}\n${result.stderr}`;
}

function requireTool(tool: string, aptPackage: string): void {
  const probe = run(tool, ['--version']);
  if (probe.error || probe.status !== 0) {
    throw new Error(`${tool} was not found: install it with \`apt-get install ${aptPackage}\` (CI installs cmake clang libclang-rt-14-dev).`);
  }
}

// Whether clang links a trivial program with these flags: the sanitizer and libFuzzer runtimes
// come in a separate Debian package (libclang-rt-14-dev) from the compiler itself.
function clangLinks(flags: string[], source: string): boolean {
  const sourcePath = path.join(scratchDir, `probe-${flags.join('').replace(/\W/g, '')}.cc`);
  writeFileSync(sourcePath, source);
  return run('clang++', [...flags, sourcePath, '-o', `${sourcePath}.out`]).status === 0;
}

// cmake-js only skips downloading node's headers when nodedir already holds them; node's own
// prefix does on Debian and in node's official tarballs, and keeps the build offline.
function nodeHeadersDir(): string {
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (!existsSync(path.join(prefix, 'include/node/node.h'))) {
    throw new Error(`node's headers are missing under ${prefix}/include/node: install the node development headers (Debian: the nodejs package ships them).`);
  }
  return prefix;
}

describe('native/CMakeLists.txt', () => {
  let sanitize = false;
  let fuzzerAvailable = false;

  beforeAll(() => {
    requireTool('cmake', 'cmake');
    requireTool('ctest', 'cmake');
    requireTool('clang++', 'clang');
    sanitize = clangLinks(['-fsanitize=address,undefined'], 'int main() { return 0; }\n');
    fuzzerAvailable = clangLinks(
      ['-fsanitize=fuzzer'],
      '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n',
    );
    const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
    const build = run(
      process.execPath,
      [cmakeJs, 'compile', '--directory', 'native', '--out', buildDir, '--prefer-clang', `--CDOVNPSAMPLE_SANITIZE=${sanitize ? 'ON' : 'OFF'}`],
      { ...process.env, npm_config_nodedir: nodeHeadersDir() },
    );
    if (build.status !== 0) throw new Error(`cmake-js compile failed: ${describeFailure(build)}`);
  }, buildTimeoutMs);

  afterAll(() => {
    rmSync(buildDir, { recursive: true, force: true });
    rmSync(scratchDir, { recursive: true, force: true });
  });

  it('runs the parser tests under ctest and they pass', () => {
    const ctest = run('ctest', ['--test-dir', buildDir, '--output-on-failure']);
    expect(ctest.status, describeFailure(ctest)).toBe(0);
    expect(ctest.stdout).toContain('100% tests passed');
    if (sanitize) {
      const cache = run('cmake', ['-L', '-N', buildDir]);
      expect(cache.stdout).toContain('OVNPSAMPLE_SANITIZE:BOOL=ON');
    }
  });

  it('builds the N-API addon as ovn_psample.node', () => {
    expect(existsSync(path.join(buildDir, 'Release', 'ovn_psample.node'))).toBe(true);
  });

  it('runs the libFuzzer target over the seed corpus without a finding', (context) => {
    if (!fuzzerAvailable) {
      context.skip('libFuzzer is missing: install it with `apt-get install libclang-rt-14-dev`');
    }
    const corpus = path.join(buildDir, 'fuzz-corpus');
    expect(existsSync(path.join(corpus, 'ovs-1.bin'))).toBe(true);
    const fuzz = run(path.join(buildDir, 'psample_parser_fuzzer'), [
      corpus,
      '-runs=200000',
      '-seed=1',
      `-artifact_prefix=${buildDir}/`,
    ]);
    expect(fuzz.status, describeFailure(fuzz)).toBe(0);
    expect(fuzz.stderr).toMatch(/Done \d+ runs/);
  }, buildTimeoutMs);
});
