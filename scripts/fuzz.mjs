// npm run fuzz [-- [--target NAME]... [--build-dir DIR] [--no-update] [libFuzzer flags]]
//
// The fuzzing campaign over the native pure code (native/fuzz, README there). For each target
// (native/fuzz/TARGET_fuzzer.cc; all by default):
//  1. replays native/fuzz/regressions/TARGET/* (every past finding), which must pass;
//  2. fuzzes from the corpus kept in native/fuzz/corpus/TARGET plus the seeds built from the
//     real captures, with the libFuzzer flags given (default -max_total_time=60);
//  3. unless --no-update, minimizes what it found together with the kept corpus and the seeds
//     (-merge=1) back into native/fuzz/corpus/TARGET, for the next run and for CI.
// A finding stops nothing else; it is reported with the input that reproduces it (make it a
// regression: see native/fuzz/README.md), and the exit status is 1.
// The last line per target:
//   FUZZ target=<name> executions=<n> seconds=<s> findings=<n> corpus=<before>-><after> cov=<edges> ft=<features>
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// A target is a native/fuzz/NAME_fuzzer.cc (native/CMakeLists.txt builds each one).
const TARGETS = readdirSync(join(root, 'native', 'fuzz'))
  .map((name) => /^(\w+)_fuzzer\.cc$/.exec(name)?.[1])
  .filter((name) => name !== undefined)
  .sort();

function usage(message) {
  console.error(
    `fuzz: ${message}\nusage: npm run fuzz -- [--target ${TARGETS.join('|')}]... [--build-dir DIR] [--no-update] [-libfuzzer_flag=value]...`,
  );
  process.exit(2);
}

const targets = [];
const fuzzerFlags = [];
let buildDir = join(root, 'native', 'build-fuzz');
let update = true;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--target') {
    const name = args[++i];
    if (!TARGETS.includes(name)) usage(`unknown target ${name}`);
    targets.push(name);
  } else if (arg === '--build-dir') {
    buildDir = resolve(args[++i] ?? usage('--build-dir needs a directory'));
  } else if (arg === '--no-update') {
    update = false;
  } else if (/^-[a-z_]+=/.test(arg)) {
    fuzzerFlags.push(arg);
  } else {
    usage(`unknown argument ${arg}`);
  }
}
if (targets.length === 0) targets.push(...TARGETS);
if (!fuzzerFlags.some((f) => /^-(max_total_time|runs)=/.test(f))) fuzzerFlags.push('-max_total_time=60');

function run(command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...options });
  if (result.error) {
    console.error(`fuzz: cannot run ${command}: ${result.error.message}`);
    process.exit(1);
  }
  return result;
}

function build() {
  // Configured every time, so that a build directory made before a target was added learns of it;
  // an existing one keeps its own compiler and build type.
  const fresh = !existsSync(join(buildDir, 'CMakeCache.txt'));
  const options = fresh
    ? ['-DCMAKE_CXX_COMPILER=clang++', '-DCMAKE_BUILD_TYPE=RelWithDebInfo', '-DOVNPSAMPLE_FUZZ=ON']
    : ['-DOVNPSAMPLE_FUZZ=ON'];
  const configure = run('cmake', ['-S', join(root, 'native'), '-B', buildDir, ...options], { stdio: 'inherit' });
  if (configure.status !== 0) {
    if (fresh) rmSync(buildDir, { recursive: true, force: true });
    console.error('fuzz: configuring the fuzzers failed; the reason is above');
    process.exit(1);
  }
  const compile = run(
    'cmake',
    ['--build', buildDir, '--parallel', '2', '--target', ...targets.map((t) => `${t}_fuzzer`), 'fuzz_seed_corpus'],
    { stdio: 'inherit' },
  );
  if (compile.status !== 0) {
    console.error('fuzz: building the fuzzers failed; the reason is above');
    process.exit(1);
  }
}

const files = (dir) => (existsSync(dir) ? readdirSync(dir).filter((name) => !name.startsWith('.')) : []);

function lastMatch(text, pattern) {
  const all = [...text.matchAll(pattern)];
  return all.length === 0 ? undefined : all[all.length - 1];
}

function fuzz(target) {
  const fuzzer = join(buildDir, `${target}_fuzzer`);
  const kept = join(root, 'native', 'fuzz', 'corpus', target);
  const regressions = join(root, 'native', 'fuzz', 'regressions', target);
  const seeds = join(buildDir, 'fuzz-seeds', target);
  const findings = join(buildDir, 'findings', target);
  mkdirSync(kept, { recursive: true });
  mkdirSync(findings, { recursive: true });
  const report = { target, executions: 0, seconds: 0, findings: [], before: files(kept).length, after: 0, cov: 0, ft: 0 };

  const replayed = files(regressions).map((name) => join(regressions, name));
  if (replayed.length > 0) {
    const replay = run(fuzzer, [`-artifact_prefix=${findings}/`, ...replayed]);
    if (replay.status !== 0) report.findings.push({ input: 'a regression input', log: replay.stderr });
  }

  const work = mkdtempSync(join(tmpdir(), `ovn-psample-fuzz-${target}-`));
  try {
    const started = Date.now();
    const campaign = run(fuzzer, [`-artifact_prefix=${findings}/`, '-print_final_stats=1', ...fuzzerFlags, work, kept, seeds]);
    report.seconds = (Date.now() - started) / 1000;
    report.executions = Number(lastMatch(campaign.stderr, /stat::number_of_executed_units:\s*(\d+)/g)?.[1] ?? 0);
    // libFuzzer's status lines: cov = code edges reached, ft = features (edges with hit counts, comparisons).
    const coverage = lastMatch(campaign.stderr, /\bcov: (\d+) ft: (\d+)/g);
    report.cov = Number(coverage?.[1] ?? 0);
    report.ft = Number(coverage?.[2] ?? 0);
    if (campaign.status === 0 && report.executions === 0) {
      report.failure = `the fuzzer ran no input:\n${campaign.stderr.slice(-2000)}`;
    } else if (campaign.status !== 0) {
      const artifact = lastMatch(campaign.stderr, /Test unit written to (\S+)/g)?.[1] ?? `(see ${findings})`;
      report.findings.push({ input: artifact, log: campaign.stderr });
    }
    if (update) {
      // -merge=1 keeps the smallest set of inputs that covers every feature of them all.
      const minimized = mkdtempSync(join(tmpdir(), `ovn-psample-corpus-${target}-`));
      const merge = run(fuzzer, ['-merge=1', minimized, kept, work, seeds]);
      if (merge.status === 0) {
        for (const name of files(kept)) rmSync(join(kept, name));
        for (const name of files(minimized)) copyFileSync(join(minimized, name), join(kept, name));
      } else {
        console.error(`fuzz: minimizing the ${target} corpus failed; the kept corpus is unchanged:\n${merge.stderr.slice(-2000)}`);
      }
      rmSync(minimized, { recursive: true, force: true });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  report.after = files(kept).length;
  return report;
}

build();
let failed = false;
for (const target of targets) {
  const r = fuzz(target);
  for (const finding of r.findings) {
    failed = true;
    const excerpt = finding.log
      .split('\n')
      .filter((line) => /ERROR|SUMMARY|runtime error|group filter:|datagram_batch:|==\d+==|#\d+ 0x/.test(line))
      .slice(0, 30)
      .join('\n');
    console.error(
      `\n${target}: FINDING, reproduced by ${finding.input}\n${excerpt}\n` +
        `Replay: ${join(buildDir, `${target}_fuzzer`)} ${finding.input}\n` +
        `Fix it, then keep the input as native/fuzz/regressions/${target}/<what-it-is>.bin and add a named test (native/fuzz/README.md).`,
    );
  }
  if (r.failure !== undefined) {
    failed = true;
    console.error(`\n${target}: ${r.failure}`);
  }
  const rate = r.seconds > 0 ? Math.round(r.executions / r.seconds) : 0;
  console.log(
    `${target}: ${r.executions} executions in ${r.seconds.toFixed(0)} s (${rate}/s), cov ${r.cov} ft ${r.ft}, ${r.findings.length} finding(s), corpus ${r.before} -> ${r.after} inputs${update ? '' : ' (not updated)'}`,
  );
  console.log(
    `FUZZ target=${target} executions=${r.executions} seconds=${r.seconds.toFixed(1)} findings=${r.findings.length} corpus=${r.before}->${r.after} cov=${r.cov} ft=${r.ft}`,
  );
}
if (failed) process.exit(1);
