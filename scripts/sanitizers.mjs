// npm run test:asan | npm run test:tsan        (as root; run by npm test)
//
// asan: builds the N-API addon itself with AddressSanitizer and UBSan (native/build-asan) and runs
//   the kernel-socket test files (test/**/*.kernel.test.ts) against it. Node is not built with ASan, so it is
//   started with clang's shared ASan runtime preloaded (LD_PRELOAD): the runtime is then the first
//   library of every process of the run (vitest, its forks, the children the tests start), its
//   malloc and interceptors serve the whole process, and the addon, built with -shared-libasan,
//   uses that one runtime. Only the addon's code is instrumented: a bad access there is caught
//   wherever the memory came from, one inside node or V8 is not looked for. Leak detection is off:
//   node does not free everything at exit, and LeakSanitizer cannot tell whose leak it is; the
//   tests count threads and descriptors instead. test/support/asan-setup.ts checks in every
//   test process that the runtime and the sanitized addon are what was loaded.
// tsan: builds native/kernel_tests/reader_stress_test with ThreadSanitizer (native/build-tsan)
//   and runs it. Node cannot run with TSan's runtime preloaded (it crashes at start), so the test
//   is a C++ harness around the N-API-free Reader that plays the addon's threads (see its header).
//
// A sanitizer that cannot be set up (no clang, no runtime) fails the run with the reason; nothing
// falls back to an unsanitized run.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { arch } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const mode = process.argv[2];
if (mode !== 'asan' && mode !== 'tsan') {
  console.error('usage: node scripts/sanitizers.mjs asan|tsan');
  process.exit(2);
}

function fail(message) {
  console.error(`test:${mode}: ${message}`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) fail(`cannot run ${command}: ${result.error.message}`);
  return result.status ?? 1;
}

// The shared runtime clang links against with -shared-libsan, or the reason it is missing.
function clangRuntime(name) {
  const probe = spawnSync('clang++', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) fail('clang++ is not installed: apt-get install clang');
  const major = /clang version (\d+)/.exec(probe.stdout)?.[1] ?? 'N';
  const machine = arch() === 'arm64' ? 'aarch64' : 'x86_64';
  const file = spawnSync('clang++', [`-print-file-name=libclang_rt.${name}-${machine}.so`], { encoding: 'utf8' }).stdout.trim();
  if (!file.startsWith('/') || !existsSync(file)) {
    fail(`clang's ${name} runtime (libclang_rt.${name}-${machine}.so) is missing: apt-get install libclang-rt-${major}-dev`);
  }
  return file;
}

function build(dir, options, target) {
  const buildDir = join(root, 'native', dir);
  const configure = [
    '-S',
    join(root, 'native'),
    '-B',
    buildDir,
    '-DCMAKE_CXX_COMPILER=clang++',
    '-DCMAKE_BUILD_TYPE=RelWithDebInfo',
    ...options,
  ];
  if (run('cmake', configure) !== 0) fail('configuring the sanitized build failed: the reason is above');
  if (run('cmake', ['--build', buildDir, '--parallel', '2', '--target', target]) !== 0)
    fail('the sanitized build failed: the reason is above');
  return buildDir;
}

// A build that came out uninstrumented (a toolchain that ignored the flags) must not pass as a
// sanitized run: the runtime's entry point is in every instrumented binary's symbols.
function requireInstrumented(file, symbol) {
  if (!existsSync(file)) fail(`${file} was not built`);
  if (!readFileSync(file).includes(symbol)) fail(`${file} is not instrumented: it has no ${symbol}`);
}

if (process.getuid?.() !== 0) fail('the sanitized tests open netlink sockets in network namespaces of their own: run them as root');

if (mode === 'asan') {
  const runtime = clangRuntime('asan');
  // node-gyp-build loads $OVN_PSAMPLE_PREBUILD/build/Release/*.node instead of the project's own.
  const prebuild = join(root, 'native', 'build-asan', 'prebuild');
  build(
    'build-asan',
    ['-DOVNPSAMPLE_ADDON_ASAN=ON', `-DCMAKE_LIBRARY_OUTPUT_DIRECTORY=${join(prebuild, 'build', 'Release')}`],
    'ovn_psample',
  );
  requireInstrumented(join(prebuild, 'build', 'Release', 'ovn_psample.node'), '__asan_init');
  const env = {
    ...process.env,
    LD_PRELOAD: runtime,
    OVN_PSAMPLE_PREBUILD: prebuild,
    ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1:halt_on_error=1:print_summary=1',
    UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
  };
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  process.exit(run(process.execPath, [vitest, 'run', '--config', 'test/config/asan.config.mts'], { cwd: root, env }));
} else {
  clangRuntime('tsan');
  const buildDir = build('build-tsan', ['-DOVNPSAMPLE_TSAN=ON'], 'reader_stress_test');
  requireInstrumented(join(buildDir, 'reader_stress_test'), '__tsan_init');
  const env = { ...process.env, TSAN_OPTIONS: 'halt_on_error=1:second_deadlock_stack=1' };
  const status = run(join(buildDir, 'reader_stress_test'), [], { env });
  if (status === 77) fail('reader_stress_test could not make its private network namespace (see above)');
  process.exit(status);
}
